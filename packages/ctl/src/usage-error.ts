import type { CommandName } from './command-table.js';

// The command line itself is wrong: an unknown command or flag, a missing target, a bad
// value. `command` says whose usage to print with the message (none: the overview).
export class UsageError extends Error {
  readonly code = 'CTL_ERR_USAGE';
  readonly command: CommandName | undefined;

  constructor(message: string, command: CommandName | undefined, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UsageError';
    this.command = command;
  }
}
