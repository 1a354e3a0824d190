// Guest networking on the testbed: the pod network (real CNI) reaches the VM through the
// launcher's tap, in-pod bridge, nftables NAT (masquerade) and its own DHCP server. The host
// fetches the guest's boot_id from the VMI's IP, the guest fetches from the host, two VMIs
// reach each other, and deletion leaves no namespace, bridge, tap, rule or IP allocation.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { before, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { readTcp, waitForConsoleText } from '../testbed/index.js';
import { runCommand } from '../testbed/sandbox/run-command.js';
import { stackNetwork, type StackNetwork } from '../testbed/sandbox/stack-network.js';
import { BOOT_TIMEOUT_MS, guestVmi, VmiSuite } from './vmi-stack.js';

/** What the masquerade NAT puts in a ruleset: KubeVirt's chain names and the guest network. */
const OURS = /KUBEVIRT_|10\.0\.2\./;

describe('guest networking on the testbed', () => {
  let net: StackNetwork;
  /** The stack's bridge, once known: it must be gone after the stack closed. */
  let bridge = '';
  let http: Server | undefined;
  let hostIP = '';
  let port = 0;
  let hostRuleset = '';
  const suite = VmiSuite.setUp({
    before: async () => {
      hostRuleset = (await runCommand(['nft', '-s', 'list', 'ruleset'])).stdout;
      assert.doesNotMatch(hostRuleset, OURS, 'no masquerade rule on the host before the test');
      return undefined;
    },
    beforeClose: async () => {
      const server = http;
      if (server !== undefined) await new Promise((r) => server.close(r));
    },
    after: async () => {
      if (bridge !== '') assert.equal((await runCommand(['ip', 'link', 'show', bridge])).code, 1, 'the stack bridge is gone');
    },
  });
  before(async () => {
    net = stackNetwork(suite.stack.testbed.kubeletRoot);
    bridge = net.bridge;
    // The host side of the stack's bridge: the only host address the guests are sent to.
    const addr = await runCommand(['ip', '-o', '-4', 'addr', 'show', 'dev', net.bridge]);
    hostIP = /inet (\d+\.\d+\.\d+\.\d+)\//.exec(addr.stdout)?.[1] ?? '';
    assert.notEqual(hostIP, '');
    const server = createServer((req, res) => res.end(`hello-from-host ${req.url ?? ''}`));
    http = server;
    await new Promise<void>((resolve) => server.listen(0, hostIP, resolve));
    port = (server.address() as { port: number }).port;
  });

  const networked = (name: string, binding: 'masquerade' | 'bridge', kernelArgs: string, ports?: unknown[]): Record<string, unknown> => {
    const vmi = guestVmi(suite.guest, name, {
      extraKernelArgs: kernelArgs,
      devices: { interfaces: [{ name: 'default', [binding]: {}, ...(ports === undefined ? {} : { ports }) }] },
    });
    (vmi['spec'] as Record<string, unknown>)['networks'] = [{ name: 'default', pod: {} }];
    return vmi;
  };
  // A VMI naming no network and no interface, as most KubeVirt manifests are: defaulting gives
  // it KubeVirt's `default` pod interface with the bridge binding.
  const unnamed = (name: string, kernelArgs: string): Record<string, unknown> => {
    const vmi = guestVmi(suite.guest, name, { extraKernelArgs: kernelArgs });
    const devices = ((vmi['spec'] as Record<string, unknown>)['domain'] as Record<string, Record<string, unknown>>)['devices'] ?? {};
    delete devices['autoattachPodInterface'];
    return vmi;
  };
  const serial = (vmi: VirtualMachineInstance): string => suite.serialLog(vmi, Object.keys(vmi.status?.activePods ?? {})[0] ?? '');
  const consoleLine = async (vmi: VirtualMachineInstance, text: string): Promise<string> =>
    (await waitForConsoleText(serial(vmi), text, { timeoutMs: BOOT_TIMEOUT_MS })).line;
  const podIP = async (vmi: VirtualMachineInstance): Promise<string> => (await suite.podsOf(vmi))[0]?.status?.podIP ?? '';
  // The guest agent's view is merged in as it changes (it is re-read every 10 s), so the IP is awaited.
  const statusIP = (name: string, ip: string): Promise<VirtualMachineInstance> =>
    suite.eventually(`${name} reports IP ${ip}`, async () => {
      const v = await suite.vmi(name);
      return v?.status?.interfaces?.[0]?.ipAddress === ip ? v : undefined;
    });

  let bridgeIP = '';
  let bridgeBootId = '';

  test('a VMI naming no interface gets the default one (bridge): the guest takes the pod IP; the host reaches it and it reaches the host', async () => {
    await suite.apply(unnamed('vm-bridge', `podvirt.fetch=http://${hostIP}:${port}/bridge`));
    const running = await suite.waitForPhase('vm-bridge', 'Running');
    const ready = await suite.waitForGuestReady(running);
    const bootId = /boot_id=(\S+)/.exec(ready)?.[1] ?? '';
    bridgeBootId = bootId;
    const ip = await podIP(running);
    bridgeIP = ip;
    assert.match(await consoleLine(running, 'PODVIRT-GUEST-NET'), new RegExp(`ip=${ip.replaceAll('.', '\\.')}/24 `));
    await statusIP('vm-bridge', ip);
    // The domain reports the pod IP for a bridged guest from the start; the agent's view comes later.
    const vmi = await suite.eventually("vm-bridge: the agent's view merged by MAC", async () => {
      const v = await suite.vmi('vm-bridge');
      return v?.status?.interfaces?.[0]?.infoSource === 'domain, guest-agent' ? v : undefined;
    });
    assert.equal(vmi.status?.interfaces?.[0]?.name, 'default');
    assert.equal(vmi.status?.interfaces?.[0]?.ipAddress, ip);
    assert.equal((await suite.eventually('boot_id over 8080', () => readTcp(ip, 8080).catch(() => undefined))).trim(), bootId);
    assert.match(await consoleLine(running, 'PODVIRT-GUEST-FETCH'), /PODVIRT-GUEST-FETCH hello-from-host \/bridge/);
  });


  test('masquerade: DHCP gives 10.0.2.2; the VMI IP is the pod IP; port 8080 reaches the guest; the guest reaches the host and the bridge VMI', async () => {
    assert.notEqual(bridgeIP, '', 'runs after the bridge test');
    await suite.apply(networked('vm-masq', 'masquerade', `podvirt.fetch=http://${hostIP}:${port}/masq podvirt.peer=${bridgeIP}:8080`, [{ name: 'http', port: 8080 }]));
    const running = await suite.waitForPhase('vm-masq', 'Running');
    const ready = await suite.waitForGuestReady(running);
    const masqBootId = /boot_id=(\S+)/.exec(ready)?.[1] ?? '';
    assert.match(await consoleLine(running, 'PODVIRT-GUEST-NET'), /PODVIRT-GUEST-NET eth0 ip=10\.0\.2\.2\/24 /);
    const masqIP = await podIP(running);
    const vmi = await statusIP('vm-masq', masqIP);
    const iface = vmi.status?.interfaces?.[0];
    assert.equal(iface?.name, 'default');
    assert.equal(iface?.ipAddress, masqIP);
    assert.match(iface?.mac ?? '', /^52:54:00:/);
    assert.match(iface?.infoSource ?? '', /^domain/);
    assert.equal(iface?.queueCount, 1);
    const table = await suite.kubectl(['get', 'vmi', 'vm-masq']);
    assert.match(table.stdout, new RegExp(`vm-masq\\s+\\S+\\s+Running\\s+${masqIP.replaceAll('.', '\\.')}\\s`));
    assert.equal((await suite.eventually('boot_id over 8080', () => readTcp(masqIP, 8080).catch(() => undefined))).trim(), masqBootId);
    assert.match(await consoleLine(running, 'PODVIRT-GUEST-FETCH'), /PODVIRT-GUEST-FETCH hello-from-host \/masq/);
    assert.equal(/PODVIRT-GUEST-PEER (\S+)/.exec(await consoleLine(running, 'PODVIRT-GUEST-PEER'))?.[1], bridgeBootId, 'VMI to VMI');
  });

  test('deleting the VMIs leaves no namespace, tap, bridge, NAT rule or host-local allocation', async () => {
    const vmis = await Promise.all(['vm-masq', 'vm-bridge'].map(async (n) => (await suite.vmi(n)) ?? assert.fail(n)));
    for (const v of vmis) assert.equal((await suite.kubectl(['delete', 'vmi', v.metadata.name ?? '', '--wait=false'])).code, 0);
    for (const v of vmis) await suite.waitForPodsGone(v, 120_000);
    const netns = (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith(net.netnsPrefix));
    assert.deepEqual(netns, []);
    const allocations = (await readdir(`${net.ipamDir}/${net.networkName}`).catch(() => [] as string[])).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f));
    assert.deepEqual(allocations, []);
    const links = (await runCommand(['ip', '-o', 'link', 'show'])).stdout;
    assert.doesNotMatch(links, /: (tap0|k6t-eth0|eth0-nic)[:@]/);
    // Other stacks on this machine change the host's ruleset meanwhile: only the absence of ours is checked.
    assert.doesNotMatch((await runCommand(['nft', '-s', 'list', 'ruleset'])).stdout, OURS, "the host's ruleset holds no masquerade rule");
  });
});
