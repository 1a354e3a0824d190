import { runCommand } from './run-command.js';
import { SandboxError } from './sandbox-error.js';

/** Where iproute2 keeps named network namespaces (bind-mounted nsfs files). */
export const netnsDir = '/run/netns';

export async function addNetns(name: string): Promise<string> {
  const res = await runCommand(['ip', 'netns', 'add', name]);
  if (res.code !== 0) throw new SandboxError('TESTBED_NETNS_FAILED', `ip netns add ${name}: ${res.stderr.trim()}`);
  // A fresh namespace's lo is down; the loopback plugin brings it up.
  return `${netnsDir}/${name}`;
}

/** Idempotent: a namespace already gone is fine. */
export async function deleteNetns(name: string): Promise<void> {
  const res = await runCommand(['ip', 'netns', 'delete', name]);
  if (res.code !== 0 && !/No such file|Invalid argument/.test(res.stderr)) {
    throw new SandboxError('TESTBED_NETNS_FAILED', `ip netns delete ${name}: ${res.stderr.trim()}`);
  }
}
