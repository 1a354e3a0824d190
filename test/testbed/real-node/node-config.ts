// The real node's configuration files as text: containerd's (config version 3 of containerd 2.x)
// and the kubelet's KubeletConfiguration. Pure functions of the paths and addresses the node
// (real-node.ts) chose, so a unit test reads what the processes are given.

export interface ContainerdConfigInput {
  /** containerd's persistent store (images, snapshots) and its runtime state (sockets, shims). */
  readonly root: string;
  readonly state: string;
  /** The CRI and containerd API socket. */
  readonly socket: string;
  /** The testbed's conflist directory and where Debian installs the CNI plugins. */
  readonly cniConfDir: string;
  readonly cniBinDir: string;
  /** The sandbox ("pause") image, already in the k8s.io namespace: never pulled. */
  readonly sandboxImage: string;
  readonly runc: string;
}

/** TOML string: JSON's quoting is TOML's for the paths and names used here. */
const q = (s: string): string => JSON.stringify(s);

export function containerdConfig(c: ContainerdConfigInput): string {
  return `# Written by the podvirt testbed (real-node lane); containerd 2.x, config version 3.
version = 3
root = ${q(c.root)}
state = ${q(c.state)}

[grpc]
  address = ${q(c.socket)}

[ttrpc]
  address = ${q(`${c.socket}.ttrpc`)}

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  # Every image is imported beforehand (podman save | ctr import): nothing is pulled and no
  # registry mirror is configured.
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = ${q(c.sandboxImage)}

[plugins."io.containerd.cri.v1.runtime"]
  # This machine withholds CAP_SYS_RESOURCE: no process may lower its oom_score_adj below its
  # parent's, so the sandbox's -998 (and a Guaranteed pod's -997) would make runc's init fail
  # ("failed to update /proc/self/oom_score_adj: Permission denied"). Clamp them to containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = ${q(c.runc)}
        # No systemd on this machine: cgroupfs, as the kubelet's cgroupDriver says.
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [${q(c.cniBinDir)}]
    conf_dir = ${q(c.cniConfDir)}
    max_conf_num = 1

[plugins."io.containerd.grpc.v1.cri"]
  # kubectl logs/exec stream through the kubelet from here: loopback only.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`;
}

export interface KubeletConfigInput {
  readonly nodeIP: string;
  readonly port: number;
  readonly healthzPort: number;
  readonly clientCAFile: string;
  readonly tlsCertFile: string;
  readonly tlsPrivateKeyFile: string;
  readonly resolvConf: string;
  /** containerd's CRI socket. */
  readonly runtimeSocket: string;
}

/** KubeletConfiguration (kubelet.config.k8s.io/v1beta1) as JSON, which the kubelet reads as YAML. */
export function kubeletConfig(k: KubeletConfigInput): string {
  return `${JSON.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: k.nodeIP,
    port: k.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: k.healthzPort,
    tlsCertFile: k.tlsCertFile,
    tlsPrivateKeyFile: k.tlsPrivateKeyFile,
    // The API server shows its kubelet-client certificate (cluster CA); what it may do is asked
    // of the API server (SubjectAccessReview), as on a cluster.
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: k.clientCAFile } },
    authorization: { mode: 'Webhook' },
    // cgroup v1 (hybrid) without systemd.
    cgroupDriver: 'cgroupfs',
    failCgroupV1: false,
    failSwapOn: false,
    resolvConf: k.resolvConf,
    // No KUBE-* iptables chains: this node runs no kube-proxy and shares the machine.
    makeIPTablesUtilChains: false,
    // Images are imported, never pulled, and never garbage-collected from under the lane.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // A shared test machine's disk and memory: evict only when really out.
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    // The node is Ready sooner and pod status shows sooner.
    nodeStatusUpdateFrequency: '4s',
    syncFrequency: '10s',
    serializeImagePulls: false,
    shutdownGracePeriod: '0s',
    containerRuntimeEndpoint: `unix://${k.runtimeSocket}`,
    registerNode: true,
  }, null, 2)}\n`;
}
