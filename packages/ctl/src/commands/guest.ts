// guestosinfo, userlist, fslist: what the guest agent knows, fetched through the handler.
import type { CallOptions, VmiApi } from '../node-client.js';
import type { Invocation } from '../parse-args.js';
import { renderFilesystemList } from '../render/filesystem-list.js';
import { renderGuestInfo } from '../render/guest-info.js';
import { renderUserList } from '../render/user-list.js';
import type { CommandResult } from './command-result.js';

type GuestInvocation = Extract<Invocation, { kind: 'guest' }>;

export async function runGuest(api: VmiApi, invocation: GuestInvocation, signal?: AbortSignal): Promise<CommandResult> {
  const options: CallOptions = { timeoutMs: invocation.call.timeoutMs, signal };
  switch (invocation.command) {
    case 'guestosinfo': {
      const info = await api.guestOsInfo(invocation.target, options);
      return { data: info, text: renderGuestInfo(info), note: '' };
    }
    case 'userlist': {
      const list = await api.userList(invocation.target, options);
      return { data: list, text: renderUserList(list), note: '' };
    }
    case 'fslist': {
      const list = await api.filesystemList(invocation.target, options);
      return { data: list, text: renderFilesystemList(list), note: '' };
    }
  }
}
