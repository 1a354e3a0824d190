// How long each call of the Cmd contract may take, one table for both ends: the launcher cuts a
// call at its class's bound whatever the client asked, and the handler's client sets the same
// bound as its deadline. podvirtctl's calls to the node API end in one of these calls, so its
// deadlines are the same too. Values from KubeVirt's cmd client: 5 s to read, 20 s to change,
// a minute to freeze (the guest agent syncs and freezes every filesystem).

import type { CmdService } from './gen/cmd.js';
import type { PromiseMethods } from './promise-client.js';

export interface CallDeadlines {
  /** Reads: Info, Ping, GetDomain, the guest agent's answers. */
  readonly shortMs: number;
  /** Changes: Sync, Shutdown, Pause, migration steps ... */
  readonly longMs: number;
  /** Freeze. */
  readonly freezeMs: number;
}

export const CALL_DEADLINES: CallDeadlines = { shortMs: 5_000, longMs: 20_000, freezeMs: 60_000 };

/** The name of each unary Cmd method, as in `cmd.CmdService` and the server implementation. */
export type CmdUnaryMethod = keyof PromiseMethods<typeof CmdService> & string;

const CLASS: Readonly<Record<CmdUnaryMethod, keyof CallDeadlines>> = {
  info: 'shortMs', ping: 'shortMs', getDomain: 'shortMs', getDomainStats: 'shortMs',
  getGuestInfo: 'shortMs', getUsers: 'shortMs', getFilesystems: 'shortMs', guestPing: 'shortMs',
  sync: 'longMs', pause: 'longMs', unpause: 'longMs', unfreeze: 'longMs', softReboot: 'longMs',
  reset: 'longMs', shutdown: 'longMs', kill: 'longMs', delete: 'longMs',
  prepareMigrationTarget: 'longMs', migrate: 'longMs', cancelMigration: 'longMs',
  freeze: 'freezeMs',
};

/** The bound of one Cmd call; `deadlines` lets a test shorten them. */
export function cmdDeadlineMs(method: CmdUnaryMethod, deadlines: CallDeadlines = CALL_DEADLINES): number {
  return deadlines[CLASS[method]];
}
