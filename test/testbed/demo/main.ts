// Entry point of the main job and its companions; the only module here that touches `process`.
//   main.js                  scripts/demo: a VMI from apply to Succeeded on the testbed
//   main.js --images         the same, the launcher pods from the built images (podman + runc)
//   main.js --network        guest networking: masquerade and bridge VMIs reached from the host and each other
//   main.js --libvirt-only   the guest booted through podvirt's libvirt client alone (no Kubernetes)
//   main.js --migrate        live migration on two nodes: A → B with podvirtctl migrate, the guest unchanged
//   main.js up [--nodes N] [-- CONTROLLER-FLAGS…] | down
//                            scripts/testbed-up / scripts/testbed-down: keep the stack running; flags
//                            after -- are added to podvirt-controller's (e.g. --feature-gates=HostDisk)
//   main.js serve            the background process `up` starts
//   --control-plane real     (demo modes, up) etcd, kube-apiserver, kube-controller-manager and
//                            kube-scheduler built by tools/build-binaries instead of the in-repo ones
//   --node real              (the demo, up) the upstream kubelet on containerd joined to the real
//                            control plane, podvirt installed as its pods from manifests/
// Any other flag, or one the mode does not take, is refused (demo-args.ts).
// Ctrl-C stops any of them cleanly.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../guest/repo-root.js';
import { bootGuestDemo, type DemoOutput } from './boot-guest-demo.js';
import { DemoUsageError, parseDemoArgs } from './demo-args.js';
import { serveStack, stackDown, stackUp, StackServiceError } from './stack-service.js';
import { migrateDemo } from './migrate-demo.js';
import { networkDemo } from './network-demo.js';
import { vmiDemo } from './vmi-demo.js';

const controller = new AbortController();
process.once('SIGINT', () => controller.abort());
process.once('SIGTERM', () => controller.abort());

const root = repoRoot(import.meta.url);
// PODVIRT_TESTBED_DIR moves the up/down bookkeeping (tests use a temp dir).
const paths = { dir: process.env['PODVIRT_TESTBED_DIR'] ?? join(root, '.testbed') };
const started = Date.now();
const stamp = (): string => `${((Date.now() - started) / 1000).toFixed(2).padStart(6)}s`;
const out: DemoOutput = {
  step: (m) => process.stdout.write(`${stamp()}  ▸ ${m}\n`),
  detail: (m) => process.stdout.write(`${stamp()}      ${m}\n`),
};
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

try {
  const command = parseDemoArgs(process.argv.slice(2));
  const controlPlane = 'controlPlane' in command ? command.controlPlane : 'testbed';
  const demo = { out, env: process.env, node: process.execPath, signal: controller.signal, controlPlane };
  if (command.mode === 'vmi') {
    await vmiDemo({ ...demo, runtime: command.runtime, nodeKind: command.node });
  } else if (command.mode === 'network') {
    await networkDemo(demo);
  } else if (command.mode === 'migrate') {
    await migrateDemo(demo);
  } else if (command.mode === 'libvirt-only') {
    await bootGuestDemo(out, controller.signal);
  } else if (command.mode === 'up') {
    const info = await stackUp(paths, process.execPath, fileURLToPath(import.meta.url), alive, command);
    const nodes = info.nodes ?? [{ nodeName: info.nodeName, nodeApiSocket: info.nodeApiSocket }];
    const several = nodes.length > 1;
    process.stdout.write(command.node === 'real'
      ? [
        `podvirt up on the real node ${info.nodeName}: the upstream kubelet on containerd, joined to the real control plane, podvirt installed from manifests/ as its pods (background pid ${info.pid}).`,
        'Point kubectl and podvirtctl at it:',
        `  export KUBECONFIG=${info.kubeconfig}`,
        `  export PODVIRT_NODE_SOCKET=${info.nodeApiSocket}`,
        ...(info.kubectl === undefined ? [] : [`  alias kubectl=${info.kubectl}   # the control plane's own release`]),
        ...(info.crictl === undefined ? [] : [`  alias crictl=${info.crictl}   # it finds containerd's socket by default`]),
        `  alias podvirtctl='node ${join(root, 'packages/ctl/bin/podvirtctl.js')}'`,
        'Then, for example:',
        '  kubectl -n podvirt get pods -o wide; crictl pods; crictl ps',
        '  kubectl apply -f manifests/examples/vmi-masquerade.yaml && kubectl get vmi -w',
        '  kubectl logs -l vm.kubevirt.io/name=testvm-net -c guest-console-log; podvirtctl console vmi testvm-net',
        `podvirt's logs: kubectl -n podvirt logs ds/podvirt-handler (and deploy/podvirt-controller); the stack's: ${paths.dir}/podvirt-stack.log. Stop with scripts/testbed-down.`,
        '',
      ].join('\n')
      : [
        `podvirt stack up: testbed node${several ? 's' : ''} ${nodes.map((n) => n.nodeName).join(', ')}, podvirt-controller and podvirt-handler from manifests/ (background pid ${info.pid}).`,
        ...(command.controllerArgs.length > 0 ? [`podvirt-controller runs with the manifest's flags plus: ${command.controllerArgs.join(' ')}`] : []),
        'Point kubectl and podvirtctl at it:',
        `  export KUBECONFIG=${info.kubeconfig}`,
        `  export PODVIRT_NODE_SOCKET=${info.nodeApiSocket}`,
        ...(several ? nodes.map((n) => `    (node ${n.nodeName}'s handler: --socket ${n.nodeApiSocket}; podvirtctl talks to the VMI's node)`) : []),
        `  alias podvirtctl='node ${join(root, 'packages/ctl/bin/podvirtctl.js')}'`,
        'Then, for example:',
        '  kubectl apply -f manifests/examples/vmi-test-guest.yaml && kubectl get vmi -w',
        '  podvirtctl pause vmi testvm; podvirtctl unpause vmi testvm; podvirtctl list',
        '  kubectl apply -f manifests/examples/vm-test-guest.yaml && podvirtctl start vm testvm-vm && kubectl get vm -w',
        ...(several
          ? [
            '  kubectl apply -f manifests/examples/vmi-masquerade.yaml   # masquerade: live-migratable (the default pod bridge is not)',
            '  podvirtctl migrate vmi testvm-net && kubectl get vmim -w   # then: kubectl get vmi -o wide',
          ]
          : []),
        `Logs: ${paths.dir}/{podvirt-stack,controller,handler}.log. Stop with scripts/testbed-down.`,
        '',
      ].join('\n'));
  } else if (command.mode === 'down') {
    const how = await stackDown(paths, (pid, signal) => process.kill(pid, signal), alive);
    process.stdout.write(how === 'stopped' ? 'podvirt stack stopped; nothing left running\n' : 'podvirt stack did not stop in time and was killed; check for leftover processes\n');
  } else {
    // serve: a host root whose dev/ holds the device nodes the handler's plugins offer (default: /dev).
    await serveStack(paths, process.pid, process.execPath, controller.signal, process.env['PODVIRT_TESTBED_DEVICE_ROOT'], command);
  }
} catch (err) {
  const known = err instanceof StackServiceError || err instanceof DemoUsageError;
  process.stderr.write(`${known ? '' : 'demo failed: '}${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof DemoUsageError ? 2 : 1;
}
