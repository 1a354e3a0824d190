import { join } from 'node:path';
import { podPaths } from '../kubelet/pod-paths.js';

/**
 * A VMI's guest serial log on the testbed: qemu writes it into the launcher pod's `private`
 * emptyDir, under the kubelet root of the node that runs the pod, in the VMI UID's directory.
 */
export function guestSerialLog(kubeletRoot: string, podUid: string, vmiUid: string): string {
  return join(podPaths(kubeletRoot, podUid).emptyDir('private'), vmiUid, 'virt-serial0-log');
}
