// The VMI commands (and a VM's start, stop, restart, migrate, and hotplug requests) through the
// Kubernetes API server instead of the node or direct writes: KubeVirt's subresource
// API (`subresources.kubevirt.io/v1`), which podvirt-api serves behind the aggregation layer and
// authorises as the calling user (their RBAC on `virtualmachineinstances/pause` …), so a user
// with a kubeconfig needs no access to the node. The same calls as the node API client, so the
// commands and their output are shared; KubeVirt's answers carry no VMI UID (OperationResponse's
// `uid` is empty here) and its guest-agent lists are mapped back to the node API's shapes. A
// refusal is the API server's KubeApiError (403 naming the user and the verb, 409 with the
// VMI's phase …), its message printed as it is.
import type { KubeClient } from '@podvirt/kube-runtime';
import type { cmd, node } from '@podvirt/proto';
import type { CallOptions, VmiApi } from './node-client.js';

const BASE = '/apis/subresources.kubevirt.io/v1/namespaces';

type Json = Readonly<Record<string, unknown>>;

export class SubresourceClient implements VmiApi {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  pause(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#put(vmi, 'pause', undefined, options);
  }

  unpause(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#put(vmi, 'unpause', undefined, options);
  }

  freeze(request: node.FreezeRequest, options: CallOptions): Promise<node.OperationResponse> {
    return this.#put(request.vmi ?? { namespace: '', name: '' }, 'freeze', { unfreezeTimeout: `${request.unfreezeTimeoutSeconds}s` }, options);
  }

  unfreeze(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#put(vmi, 'unfreeze', undefined, options);
  }

  softReboot(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#put(vmi, 'softreboot', undefined, options);
  }

  reset(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#put(vmi, 'reset', undefined, options);
  }

  async guestOsInfo(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestInfo> {
    const info = await this.#get(vmi, 'guestosinfo', options);
    const os = record(info['os']);
    const osText = (key: string): string => text(os[key]);
    return {
      guestAgentVersion: text(info['guestAgentVersion']),
      supportedCommands: list(info['supportedCommands']).map((c) => ({ name: text(c['name']), enabled: c['enabled'] === true })),
      hostname: text(info['hostname']),
      os: {
        name: osText('name'), kernelRelease: osText('kernelRelease'), version: osText('version'), prettyName: osText('prettyName'),
        versionId: osText('versionId'), kernelVersion: osText('kernelVersion'), machine: osText('machine'), id: osText('id'),
      },
      timezone: text(info['timezone']),
      users: list(info['userList']).map(user),
      filesystems: list(record(info['fsInfo'])['disks']).map(filesystem),
      fsFreezeStatus: text(info['fsFreezeStatus']),
    };
  }

  async userList(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestUserList> {
    return { users: list((await this.#get(vmi, 'userlist', options))['items']).map(user) };
  }

  async filesystemList(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestFilesystemList> {
    return { filesystems: list((await this.#get(vmi, 'filesystemlist', options))['items']).map(filesystem) };
  }

  /**
   * A request KubeVirt answers 202 with no body: `virtualmachines/NAME/{start,stop,restart,migrate,
   * addvolume,removevolume}` and `virtualmachineinstances/NAME/{addvolume,removevolume}`. What was
   * asked is all the caller can say; the objects' status shows what follows.
   */
  async change(resource: 'virtualmachines' | 'virtualmachineinstances', ref: node.VmiRef, subresource: string, body: object | undefined, signal: AbortSignal): Promise<void> {
    await this.#client.request({ method: 'PUT', path: pathOf(ref, subresource, resource), ...(body === undefined ? {} : { body }), signal });
  }

  async #put(vmi: node.VmiRef, subresource: string, body: Json | undefined, options: CallOptions): Promise<node.OperationResponse> {
    await this.#client.request({ method: 'PUT', path: pathOf(vmi, subresource), ...(body === undefined ? {} : { body }), ...call(options) });
    return { uid: '' };
  }

  async #get(vmi: node.VmiRef, subresource: string, options: CallOptions): Promise<Json> {
    return record(await this.#client.request({ path: pathOf(vmi, subresource), ...call(options) }));
  }
}

function pathOf(ref: node.VmiRef, subresource: string, resource = 'virtualmachineinstances'): string {
  return `${BASE}/${encodeURIComponent(ref.namespace)}/${resource}/${encodeURIComponent(ref.name)}/${subresource}`;
}

function call(options: CallOptions): { timeoutMs: number; signal?: AbortSignal } {
  return { timeoutMs: options.timeoutMs, ...(options.signal === undefined ? {} : { signal: options.signal }) };
}

function user(u: Json): cmd.GuestUser {
  return { userName: text(u['userName']), domain: text(u['domain']), loginTime: num(u['loginTime']) };
}

function filesystem(f: Json): cmd.GuestFilesystem {
  return {
    diskName: text(f['diskName']), mountPoint: text(f['mountPoint']), fileSystemType: text(f['fileSystemType']),
    usedBytes: num(f['usedBytes']), totalBytes: num(f['totalBytes']), disks: [],
  };
}

function record(v: unknown): Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
}

function list(v: unknown): Json[] {
  return Array.isArray(v) ? v.map(record) : [];
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}
