// Where the handler serves its node API and how long podvirtctl waits for it. The handler
// imports NODE_API_SOCKET so that both sides agree on one host path.

// A directory of podvirt's own rather than KubeVirt's /var/run/kubevirt: that one is shared
// with launcher pods, while this socket must stay root-only (the handler makes the directory
// 0700 and the socket 0600).
export const NODE_API_SOCKET = '/var/run/podvirt/node.sock';

// Overrides NODE_API_SOCKET for podvirtctl; --socket overrides both.
export const NODE_API_SOCKET_ENV = 'PODVIRT_NODE_SOCKET';

// Deadline of one call unless --timeout says otherwise.
export const DEFAULT_TIMEOUT_MS = 20_000;

// Freezing waits for the guest agent to sync and freeze every filesystem, which KubeVirt
// allows a minute for.
export const FREEZE_TIMEOUT_MS = 60_000;

// virtctl's default for --unfreeze-timeout: a forgotten freeze thaws by itself after 5 minutes.
export const DEFAULT_UNFREEZE_TIMEOUT_SECONDS = 300;

export const DEFAULT_NAMESPACE = 'default';
