// `scripts/demo --network`: the pod network reaches the guest. A variant of
// manifests/examples/vmi-masquerade.yaml without interfaces (defaulted to bridge) and the
// example itself (masquerade, a listed port) boot on the testbed; kubectl shows their IPs; the
// host fetches each guest's boot_id from the VMI's IP on port 8080; each guest fetches a page
// from the host, and the masquerade guest reaches the bridge one.
// Deleting them leaves no namespace, tap, bridge, rule or address allocation. Traffic only
// ever goes to addresses on the testbed's own bridge. With PODVIRT_TESTBED_IPV6=1 the pod network
// is dual-stack and the masquerade guest also takes fd10:0:2::2 by DHCPv6: the host fetches its
// boot_id through the pod's IPv6 address and the guest fetches the host's page over IPv6 (NAT66).
import { readTcp } from '../sandbox/read-tcp.js';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '@podvirt/api';
import { guestImage } from '../guest/guest-image.js';
import { repoRoot } from '../guest/repo-root.js';
import { waitForConsoleText } from '../guest/wait-for-console-text.js';
import { podIPFamilies } from '../sandbox/pod-network.js';
import { runCommand } from '../sandbox/run-command.js';
import { stackNetwork } from '../sandbox/stack-network.js';
import { guestSerialLog } from '../stack/guest-serial-log.js';
import type { PodvirtStack } from '../stack/start-podvirt-stack.js';
import type { DemoOutput } from './boot-guest-demo.js';
import { controlPlaneOption } from './demo-args.js';
import { DemoShell, kubectlOf } from './demo-shell.js';
import { onDemoStack, testbedStack } from './demo-stack.js';
import { until } from './demo-until.js';
import type { VmiDemoOptions } from './vmi-demo.js';
import type { VmiPhaseWatch } from './vmi-phase-watch.js';

/** The same inputs as the main demo's. */
export type NetworkDemoOptions = VmiDemoOptions;

const EXAMPLE = 'manifests/examples/vmi-masquerade.yaml';
const NS = 'default';
const TIMEOUT_MS = 120_000;

export async function networkDemo(o: NetworkDemoOptions): Promise<void> {
  const { out, signal } = o;
  const root = repoRoot(import.meta.url);
  await onDemoStack(out, {
    stack: testbedStack({ node: o.node, ...controlPlaneOption(o.controlPlane) }),
    namespace: NS,
    starting: 'starting the testbed and podvirt-controller + podvirt-handler (pods get their IPs from real CNI plugins)',
    tearingDown: 'tearing down: handler, controller, testbed (its bridge and CNI state go too)',
  }, async ({ stack: s, watch, defer }) => {
    const net = stackNetwork(s.testbed.kubeletRoot);
    const hostIP = /inet (\d+\.\d+\.\d+\.\d+)\//.exec((await runCommand(['ip', '-o', '-4', 'addr', 'show', 'dev', net.bridge])).stdout)?.[1] ?? '';
    const http = createServer((req, res) => res.end(`hello from the host, you asked for ${req.url ?? ''}`));
    await new Promise<void>((resolve) => http.listen(0, hostIP, resolve));
    defer(() => new Promise((r) => http.close(r)));
    const port = (http.address() as { port: number }).port;
    out.detail(`pod network: bridge ${net.bridge}, the host is ${hostIP} on it; a web page waits on ${hostIP}:${port}`);
    // The testbed's kubelet reads the same variable: a dual-stack pod network.
    const dual = podIPFamilies(process.env['PODVIRT_TESTBED_IPV6']) === 'dual';
    let v6 = { hostIP: '', port: 0 };
    if (dual) {
      const hostIP6 = /inet6 ([0-9a-f:]+)\//.exec((await runCommand(['ip', '-o', '-6', 'addr', 'show', 'dev', net.bridge, 'scope', 'global'])).stdout)?.[1] ?? '';
      const http6 = createServer((req, res) => res.end(`hello from the host over IPv6, you asked for ${req.url ?? ''}`));
      await new Promise<void>((resolve) => http6.listen(0, hostIP6, resolve));
      defer(() => new Promise((r) => http6.close(r)));
      v6 = { hostIP: hostIP6, port: (http6.address() as { port: number }).port };
      out.detail(`dual-stack (PODVIRT_TESTBED_IPV6=1): the host is also ${hostIP6} on the bridge; a web page waits on [${hostIP6}]:${v6.port}`);
    }

    const shell = new DemoShell({ out, env: o.env, node: o.node, repoRoot: root, kubeconfig: s.kubeconfigPath, ...kubectlOf(s), nodeApiSocket: s.nodeApiSocket });
    const core = s.kubeConfig.makeApiClient(CoreV1Api);

    // The example as is (masquerade, port 8080 listed), and a variant that names no interface
    // and no network, which gets KubeVirt's default (interface `default`, bridge binding), each
    // with a kernel argument that has the guest fetch the host's page; the masquerade guest also
    // reaches the bridge one.
    const base = await readFile(join(root, EXAMPLE), 'utf8');
    const withArgs = (text: string, args: string): string => text.replace(/(kernelArgs: .*)/, `$1 ${args}`);
    const bridgeFile = join(s.stateDir, 'vmi-bridge.yaml');
    const unnamed = withArgs(base, `podvirt.fetch=http://${hostIP}:${port}/from-bridge`)
      .replace('name: testvm-net', 'name: testvm-bridge')
      .replace(/\n {6}interfaces:\n(?: {6}[ -].*\n)+/, '\n')
      .replace(/\n {2}networks:\n(?: {2}[ -].*\n)+/, '\n');
    if (/interfaces:|networks:/.test(unnamed)) throw new Error(`could not drop the interfaces and networks of ${EXAMPLE}`);
    await writeFile(bridgeFile, unnamed);
    out.step(`${EXAMPLE} without its interfaces and networks: defaulting gives it the pod interface \`default\` with the bridge binding, as KubeVirt's does (the pod's IP and MAC move into the guest); podvirt.fetch=http://${hostIP}:${port}/… on its kernel line`);
    await shell.kubectl(['apply', '-f', bridgeFile]);
    const bridge = await showGuest(s, shell, watch, core, 'testvm-bridge', out, signal);

    const masqFile = join(s.stateDir, 'vmi-masquerade.yaml');
    const args6 = dual ? ` podvirt.ipv6=dhcp podvirt.fetch6=http://[${v6.hostIP}]:${v6.port}/from-masquerade-over-ipv6` : '';
    await writeFile(masqFile, withArgs(base, `podvirt.fetch=http://${hostIP}:${port}/from-masquerade podvirt.peer=${bridge.ip}:8080${args6}`));
    out.step(`applying ${EXAMPLE} (masquerade, port 8080 listed), told to fetch from the host and to reach testvm-bridge at ${bridge.ip}:8080`);
    await shell.kubectl(['apply', '-f', masqFile]);
    const masq = await showGuest(s, shell, watch, core, 'testvm-net', out, signal);
    const peer = (await waitForConsoleText(masq.serial, 'PODVIRT-GUEST-PEER', { timeoutMs: TIMEOUT_MS })).line.replace('PODVIRT-GUEST-PEER', '').trim();
    out.step(`VMI to VMI: testvm-net read ${peer} from testvm-bridge (whose boot_id is ${bridge.bootId})`);
    if (peer !== bridge.bootId) throw new Error('testvm-net did not reach testvm-bridge');
    if (dual) await showGuestIPv6(s, shell, core, 'testvm-net', masq, out);

    out.step('kubectl get vmi -o wide');
    await shell.kubectl(['get', 'vmi', '-o', 'wide']);

    out.step('deleting both VMIs; their pods end and the kubelet removes their sandboxes');
    await shell.kubectl(['delete', 'vmi', 'testvm-net', 'testvm-bridge', '--wait=false']);
    for (const name of ['testvm-net', 'testvm-bridge']) await watch.waitFor(name, 'Succeeded', TIMEOUT_MS, signal);
    await until('the launcher pods to be gone', async () => ((await core.listNamespacedPod({ namespace: NS })).items.length === 0 ? true : undefined), TIMEOUT_MS);
    const netns = (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith(net.netnsPrefix));
    const ips = (await readdir(join(net.ipamDir, net.networkName)).catch(() => [] as string[])).filter((f) => /^\d+\.\d+\.\d+\.\d+$|:/.test(f));
    out.detail(`network namespaces of this stack: ${netns.length}; addresses still allocated in host-local's ${net.ipamDir}: ${ips.length}`);
    if (netns.length + ips.length > 0) throw new Error(`left behind: ${[...netns, ...ips].join(', ')}`);
  });
}

/** Waits for Running and the guest's network line; shows the IP, the boot_id over 8080 and the guest's fetch. */
async function showGuest(
  s: PodvirtStack,
  shell: DemoShell,
  watch: VmiPhaseWatch,
  core: CoreV1Api,
  name: string,
  out: DemoOutput,
  signal: AbortSignal | undefined,
): Promise<{ ip: string; bootId: string; serial: string }> {
  await watch.waitFor(name, 'Running', TIMEOUT_MS, signal);
  const pod = (await core.listNamespacedPod({ namespace: NS, labelSelector: `vm.kubevirt.io/name=${name}` })).items[0];
  const vmiUid = pod?.metadata?.labels?.['kubevirt.io/created-by'] ?? '';
  const serial = guestSerialLog(s.testbed.kubeletRoot, pod?.metadata?.uid ?? '', vmiUid);
  const ready = await waitForConsoleText(serial, guestImage().readyMarker, { timeoutMs: TIMEOUT_MS });
  const bootId = /boot_id=(\S+)/.exec(ready.line)?.[1] ?? '';
  const lease = await waitForConsoleText(serial, 'PODVIRT-GUEST-NET eth0', { timeoutMs: TIMEOUT_MS });
  out.detail(`console | ${lease.line.trim()}`);
  const ip = pod?.status?.podIP ?? '';
  const custom = s.kubeConfig.makeApiClient(CustomObjectsApi);
  await until(`${name}'s IP in its status`, async () => {
    const vmi = (await custom.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances', name })) as VirtualMachineInstance;
    return vmi.status?.interfaces?.[0]?.ipAddress === ip ? true : undefined;
  }, TIMEOUT_MS);
  await shell.kubectl(['get', 'vmi', name]);
  const answer = (await until(`${ip}:8080`, () => readTcp(ip, 8080), TIMEOUT_MS)).trim();
  out.step(`from the host: ${ip}:8080 answers ${answer} (the guest's boot_id is ${bootId})`);
  const fetched = await waitForConsoleText(serial, 'PODVIRT-GUEST-FETCH ', { timeoutMs: TIMEOUT_MS });
  out.step(`from the guest: ${fetched.line.trim()}`);
  return { ip, bootId, serial };
}

/** The masquerade guest over IPv6: its DHCPv6 lease, its boot_id through the pod's IPv6 address, its fetch over IPv6, both pod IPs in its status. */
async function showGuestIPv6(s: PodvirtStack, shell: DemoShell, core: CoreV1Api, name: string, guest: { bootId: string; serial: string }, out: DemoOutput): Promise<void> {
  const lease = await waitForConsoleText(guest.serial, 'PODVIRT-GUEST-NET6', { timeoutMs: TIMEOUT_MS });
  out.detail(`console | ${lease.line.trim()}`);
  const pod = (await core.listNamespacedPod({ namespace: NS, labelSelector: `vm.kubevirt.io/name=${name}` })).items[0];
  const ip6 = pod?.status?.podIPs?.map((p) => p.ip).find((ip) => ip.includes(':')) ?? '';
  const answer = (await until(`[${ip6}]:8080`, () => readTcp(ip6, 8080), TIMEOUT_MS)).trim();
  out.step(`from the host over IPv6: [${ip6}]:8080 answers ${answer} (the guest's boot_id is ${guest.bootId})`);
  if (answer !== guest.bootId) throw new Error(`${name} did not answer over IPv6`);
  const fetched = await waitForConsoleText(guest.serial, 'PODVIRT-GUEST-FETCH6', { timeoutMs: TIMEOUT_MS });
  out.step(`from the guest over IPv6: ${fetched.line.trim()}`);
  const custom = s.kubeConfig.makeApiClient(CustomObjectsApi);
  await until(`${name}'s IPv6 in its status`, async () => {
    const vmi = (await custom.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances', name })) as VirtualMachineInstance;
    return vmi.status?.interfaces?.[0]?.ipAddresses?.includes(ip6) === true ? true : undefined;
  }, TIMEOUT_MS);
  await shell.kubectl(['get', 'vmi', name, '-o', 'jsonpath={.status.interfaces[0].ipAddresses}']);
}
