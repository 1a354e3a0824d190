// The guest's serial log, as the launcher makes it and the launcher pod's guest-console-log
// container reads it: KubeVirt's file name and its unprivileged account (the qemu uid of its
// images). The launcher gives that account the log (owner-only) and lets others pass through
// the VMI's private directory; the container runs as it with no capability, so it reads the log
// and nothing else of the pod.

/** The serial log's name in the VMI's private directory (`<private dir>/<vmi uid>/`). */
export const SERIAL_LOG_FILE = 'virt-serial0-log';

/** The account (uid and gid) the guest-console-log container runs as and the log belongs to. */
export const NON_ROOT_UID = 107;
