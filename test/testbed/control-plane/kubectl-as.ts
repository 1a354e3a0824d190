// The control plane's own kubectl (the same release as the API server, tools/build-binaries)
// run with one kubeconfig; what the real lane uses to install manifests as an operator would.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ControlPlaneError } from './control-plane-binaries.js';
import type { RealControlPlane } from './real-control-plane.js';

const run = promisify(execFile);

export async function kubectlAs(cp: RealControlPlane, kubeconfig: string, args: readonly string[]): Promise<string> {
  try {
    return (await run(cp.binaries.kubectl, ['--kubeconfig', kubeconfig, ...args], { timeout: 120_000 })).stdout;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim() ?? (err as Error).message;
    throw new ControlPlaneError('CONTROL_PLANE_START_FAILED', `kubectl ${args.join(' ')}: ${stderr}`, { cause: err });
  }
}
