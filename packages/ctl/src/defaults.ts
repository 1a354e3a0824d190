// How podvirtctl finds the handler's node API. The socket path itself, NODE_API_SOCKET, lives
// in @podvirt/proto so that the handler and this CLI share it, and so do the calls' deadlines
// (CALL_DEADLINES: a node API call ends in a Cmd call to the launcher).

// Overrides NODE_API_SOCKET for podvirtctl; --socket overrides both.
export const NODE_API_SOCKET_ENV = 'PODVIRT_NODE_SOCKET';

// virtctl's default for --unfreeze-timeout: a forgotten freeze thaws by itself after 5 minutes.
export const DEFAULT_UNFREEZE_TIMEOUT_SECONDS = 300;

export const DEFAULT_NAMESPACE = 'default';
