// A container's own /dev, as a container runtime makes one: a tmpfs with the standard nodes
// (null, zero, full, random, urandom, tty), a private devpts instance and /dev/shm, the fd
// links, and exactly the device nodes the kubelet was told to add (device plugins' DeviceSpecs).
// Without it the process runtime's containers see the host's /dev. Nodes are made with mknod
// from the host device's numbers, so a host node removed later leaves the container's alone.

export interface DeviceNode {
  /** Where the node appears inside the container. */
  readonly path: string;
  readonly type: 'c' | 'b';
  readonly major: number;
  readonly minor: number;
  /** Permission bits of the node (the host node's). */
  readonly mode: number;
}

/** Shell run inside the new mount namespace, before the bind mounts; reads $ndev nodes from "$@". */
export const PRIVATE_DEV_SETUP = `private_dev() {
  mount -t tmpfs -o nosuid,mode=755,size=1m tmpfs /dev
  for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
    IFS=: read -r name maj min <<<"$d"
    mknod -m 666 "/dev/$name" c "$maj" "$min"
  done
  mkdir /dev/pts /dev/shm
  mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts /dev/pts
  ln -s pts/ptmx /dev/ptmx
  mount -t tmpfs -o nosuid,nodev,mode=1777 shm /dev/shm
  ln -s /proc/self/fd /dev/fd; ln -s fd/0 /dev/stdin; ln -s fd/1 /dev/stdout; ln -s fd/2 /dev/stderr
}
`;

export function deviceArgs(nodes: readonly DeviceNode[]): string[] {
  return nodes.flatMap((d) => {
    if (!d.path.startsWith('/dev/') || d.path.split('/').includes('..')) throw new Error(`device path ${JSON.stringify(d.path)} must be under /dev`);
    return [d.path, d.type, String(d.major), String(d.minor), (d.mode & 0o777).toString(8)];
  });
}
