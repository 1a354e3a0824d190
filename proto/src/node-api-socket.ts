// Where the handler serves its node API on the host. Both the handler (server) and podvirtctl
// (client) import it from here so that the two sides agree on one path.
//
// A directory of podvirt's own rather than KubeVirt's /var/run/kubevirt: that one is shared
// with launcher pods, while this socket must stay root-only (the handler makes the directory
// 0700 and the socket 0600).
export const NODE_API_SOCKET = '/var/run/podvirt/node.sock';
