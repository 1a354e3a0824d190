import { join } from 'node:path';

/** The kubelet root's layout, as the real kubelet has it (the handler finds launcher sockets there). */
export interface PodPaths {
  podDir: string;
  emptyDir(volume: string): string;
  containerState(container: string): string;
  log(container: string): string;
}

export function podPaths(rootDir: string, podUID: string): PodPaths {
  const podDir = join(rootDir, 'pods', podUID);
  return {
    podDir,
    emptyDir: (volume) => join(podDir, 'volumes', 'kubernetes.io~empty-dir', volume),
    containerState: (container) => join(podDir, 'containers', container),
    log: (container) => join(podDir, 'logs', `${container}.log`),
  };
}
