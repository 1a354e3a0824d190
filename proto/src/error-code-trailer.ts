// The launcher names its own error code (LAUNCHER_ERR_...) in this trailing metadata key of a
// failed Cmd call, next to the gRPC status. The gRPC code says how to treat the failure in
// general; this code says which failure it was, so a client decides on it, never on the text.
export const ERROR_CODE_TRAILER = 'podvirt-error-code';
