import { join } from 'node:path';
import type { CniNetworkList } from './cni-config.js';
import { runCommand } from './run-command.js';
import { SandboxError } from './sandbox-error.js';

/** What a runtime passes every CNI plugin besides its config (the CNI_* environment). */
export interface CniRuntimeConf {
  containerId: string;
  netnsPath: string;
  ifName: string;
  cniPath: string;
}

/** The parts of a CNI 1.0.0 result the testbed reads. */
export interface CniResult {
  cniVersion?: string;
  interfaces?: Array<{ name: string; mac?: string; sandbox?: string }>;
  ips?: Array<{ address: string; gateway?: string; interface?: number }>;
  routes?: Array<{ dst: string; gw?: string }>;
  dns?: Record<string, unknown>;
}

/**
 * Runs a conflist's plugins as a container runtime does: ADD in order, each plugin getting the
 * previous one's result as `prevResult`; DEL in reverse order with the cached ADD result. A
 * plugin's error (its JSON `msg`/`details` on stdout) becomes a TESTBED_CNI_FAILED error.
 */
export async function cniAdd(list: CniNetworkList, rt: CniRuntimeConf): Promise<CniResult> {
  let prev: CniResult | undefined;
  for (const plugin of list.plugins) {
    prev = await invoke('ADD', list, plugin, rt, prev);
  }
  return prev ?? {};
}

export async function cniDel(list: CniNetworkList, rt: CniRuntimeConf, added?: CniResult): Promise<void> {
  for (const plugin of [...list.plugins].reverse()) {
    await invoke('DEL', list, plugin, rt, added);
  }
}

async function invoke(
  command: 'ADD' | 'DEL',
  list: CniNetworkList,
  plugin: CniNetworkList['plugins'][number],
  rt: CniRuntimeConf,
  prevResult: CniResult | undefined,
): Promise<CniResult> {
  const config = { ...plugin, cniVersion: list.cniVersion, name: list.name, ...(prevResult === undefined ? {} : { prevResult }) };
  const env = {
    PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
    CNI_COMMAND: command,
    CNI_CONTAINERID: rt.containerId,
    CNI_NETNS: rt.netnsPath,
    CNI_IFNAME: rt.ifName,
    CNI_PATH: rt.cniPath,
  };
  const binary = join(rt.cniPath, plugin.type);
  let res;
  try {
    res = await runCommand([binary], { stdin: JSON.stringify(config), env });
  } catch (err) {
    throw new SandboxError('TESTBED_CNI_FAILED', `plugin type="${plugin.type}" failed (${command.toLowerCase()}): ${(err as Error).message}`, { cause: err });
  }
  if (res.code !== 0) {
    throw new SandboxError('TESTBED_CNI_FAILED', `plugin type="${plugin.type}" failed (${command.toLowerCase()}): ${pluginError(res.stdout, res.stderr)}`);
  }
  if (command === 'DEL' || res.stdout.trim() === '') return prevResult ?? {};
  return JSON.parse(res.stdout) as CniResult;
}

function pluginError(stdout: string, stderr: string): string {
  try {
    const e = JSON.parse(stdout) as { msg?: string; details?: string };
    if (e.msg !== undefined) return e.details === undefined || e.details === '' ? e.msg : `${e.msg}: ${e.details}`;
  } catch {
    // not the CNI error format
  }
  return (stderr.trim() || stdout.trim() || 'no output').slice(0, 500);
}
