// Runs a tool (ip, nft, sysctl) inside a launcher pod's network namespace with nsenter, as
// virt-handler enters the pod's namespace for its privileged network phase.

import { execFile } from 'node:child_process';

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The one way the wiring touches a pod's network namespace; a fake replaces it in tests. */
export interface NetnsCommand {
  run(netnsPath: string, argv: readonly string[], signal?: AbortSignal): Promise<CommandResult>;
}

// Each tool call is one netlink or nftables transaction; a minute means something is stuck.
const TOOL_TIMEOUT_MS = 60_000;

export const nsenterCommand: NetnsCommand = {
  run(netnsPath, argv, signal) {
    return new Promise((resolve, reject) => {
      execFile('nsenter', [`--net=${netnsPath}`, '--', ...argv], { timeout: TOOL_TIMEOUT_MS, ...(signal ? { signal } : {}) }, (err, stdout, stderr) => {
        if (err !== null && typeof err.code !== 'number') reject(err);
        else resolve({ code: err === null ? 0 : (err.code as number), stdout, stderr });
      });
    });
  },
};
