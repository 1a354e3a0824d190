// Where the upstream binaries are: tools/build-binaries knows the machine-wide cache directory of
// each project (keyed by version and by the content of its consumer module) and says so; this
// asks it rather than computing the key a second time.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** Where Go's own archive installs it; a non-login shell (CI) may not have it on PATH. */
const GO_ARCHIVE_BIN = '/usr/local/go/bin';

export class ControlPlaneError extends Error {
  constructor(
    readonly code: 'CONTROL_PLANE_NOT_BUILT' | 'CONTROL_PLANE_START_FAILED' | 'CONTROL_PLANE_TOKEN_FAILED' | 'CONTROL_PLANE_ETCD_FAILED',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ControlPlaneError';
  }
}

export interface ControlPlaneBinaries {
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kubelet: string;
  readonly kubectl: string;
}

/** The cache directory of one project of tools/ (kube, etcd, containerd, cri-tools); rejects when it is not built. */
export async function binaryDir(repoRoot: string, project: string): Promise<string> {
  try {
    return (await run(join(repoRoot, 'tools/build-binaries'), ['--dir', project], { env: { ...process.env, PATH: `${process.env['PATH'] ?? '/usr/bin:/bin'}:${GO_ARCHIVE_BIN}` } })).stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim() ?? (err as Error).message;
    throw new ControlPlaneError('CONTROL_PLANE_NOT_BUILT', `the ${project} binaries of tools/ are not built: ${stderr}`, { cause: err });
  }
}

export async function controlPlaneBinaries(repoRoot: string): Promise<ControlPlaneBinaries> {
  const dir = (project: string): Promise<string> => binaryDir(repoRoot, project);
  const [kube, etcd] = await Promise.all([dir('kube'), dir('etcd')]);
  return {
    etcd: join(etcd, 'etcd'),
    kubeApiserver: join(kube, 'kube-apiserver'),
    kubeControllerManager: join(kube, 'kube-controller-manager'),
    kubeScheduler: join(kube, 'kube-scheduler'),
    kubelet: join(kube, 'kubelet'),
    kubectl: join(kube, 'kubectl'),
  };
}
