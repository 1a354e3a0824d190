// How a container of the install manifests runs as a process on the testbed host: the ONE
// place where the testbed departs from the manifests, each departure named here. Everything
// else — every flag and environment variable — comes from the manifest unchanged.
//
//   image files   `/usr/bin/podvirt-handler` … → node + the built package's bin script
//   downward API  fieldRef spec.nodeName → the testbed node, metadata.name → `<workload>-0`,
//                 metadata.namespace → the workload's namespace, status.podIP → 127.0.0.1
//   host paths    a hostPath volume's mount path, where an argument names it, becomes the
//                 testbed directory standing in for that host path (the kubelet's pods dir,
//                 the handler's host dirs under the stack's state dir)
//   ports         --metrics-port / --health-port → 0: stacks share the host's network, which
//                 a pod network would keep apart (the port in use is logged)
//   secrets       --migration-tls-dir (the Secret's mount) → the node's certificates the stack made
//   in-cluster    --kubeconfig <file> with the workload's ServiceAccount as bearer token,
//                 where a pod would get its service-account token mounted
//   host          --allow-emulation for the controller: this host has no usable KVM (TCG only)
//   podvirt-api   (real lane) --secure-port → a free port, --bind-address=127.0.0.1 and
//                 --tls-san=127.0.0.1: its webhooks are called on loopback (podvirt-api-process.ts)
import type { ManifestWorkload } from './manifest-workload.js';
import { ManifestError } from './manifest-workload.js';

export interface TestbedMapping {
  /** Image file → the local argv standing in for it. */
  readonly binaries: Readonly<Record<string, readonly string[]>>;
  /** Downward API field path → value. */
  readonly fieldRefs: Readonly<Record<string, string>>;
  /** Host path of a hostPath volume → the testbed directory used instead. */
  readonly hostPaths: Readonly<Record<string, string>>;
  /** Flag → the value it gets here instead of the manifest's. */
  readonly flagValues: Readonly<Record<string, string>>;
  /** Appended after the manifest's args. */
  readonly extraArgs: readonly string[];
}

export interface TestbedCommand {
  readonly argv: readonly string[];
  /** The container's environment after the mapping (without the host's own). */
  readonly env: Readonly<Record<string, string>>;
}

export function testbedCommand(workload: ManifestWorkload, mapping: TestbedMapping): TestbedCommand {
  const what = `${workload.kind} ${workload.name}`;
  const env: Record<string, string> = {};
  for (const e of workload.env) {
    if (e.fieldPath !== undefined) {
      const value = mapping.fieldRefs[e.fieldPath];
      if (value === undefined) throw new ManifestError(`${what}: no testbed value for fieldRef ${e.fieldPath}`);
      env[e.name] = value;
    } else {
      env[e.name] = expand(e.value ?? '', env);
    }
  }
  const [image, ...rest] = workload.command;
  const binary = image === undefined ? undefined : mapping.binaries[image];
  if (binary === undefined) throw new ManifestError(`${what}: no testbed binary for command ${String(image)}`);
  const mounts = [...workload.hostMounts].map(([mountPath, hostPath]) => {
    const local = mapping.hostPaths[hostPath];
    if (local === undefined) throw new ManifestError(`${what}: no testbed directory for hostPath ${hostPath}`);
    return { mountPath, local };
  });
  const rewrite = (arg: string): string => {
    const [flag, value] = splitFlag(arg);
    if (value === undefined) return rebase(arg, mounts);
    return `${flag}=${rebase(value, mounts)}`;
  };
  const args = replaceFlagValues([...rest, ...workload.args].map((a) => rewrite(expand(a, env))), mapping.flagValues);
  return { argv: [...binary, ...args, ...mapping.extraArgs], env };
}

/** The kubelet's `$(VAR)` expansion: defined variables are replaced, `$$` escapes. */
function expand(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (match, name: string | undefined) => {
    if (name === undefined) return '$';
    return env[name] ?? match;
  });
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return arg.startsWith('--') && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
}

function rebase(path: string, mounts: readonly { mountPath: string; local: string }[]): string {
  for (const { mountPath, local } of mounts) {
    if (path === mountPath) return local;
    if (path.startsWith(`${mountPath}/`)) return `${local}${path.slice(mountPath.length)}`;
  }
  return path;
}

function replaceFlagValues(args: string[], values: Readonly<Record<string, string>>): string[] {
  return args.map((arg, i) => {
    const [flag, value] = splitFlag(arg);
    if (value !== undefined) return values[flag] === undefined ? arg : `${flag}=${values[flag]}`;
    const previous = args[i - 1];
    // `--flag value`: the value is the next argument.
    return previous !== undefined && !previous.includes('=') && values[previous] !== undefined ? (values[previous] ?? arg) : arg;
  });
}
