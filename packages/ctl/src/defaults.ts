// How podvirtctl finds the handler's node API and how long it waits for it. The socket path
// itself, NODE_API_SOCKET, lives in @podvirt/proto so that the handler and this CLI share it.

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
