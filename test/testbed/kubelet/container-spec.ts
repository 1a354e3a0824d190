import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { join } from 'node:path';
import type { BindMount } from '../container/container-state-paths.js';
import type { PodPaths } from './pod-paths.js';

const basePath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Environment of a container: defaults, then the image's ENV, then `env` with the
 * downward-API fields podvirt uses.
 */
export function containerEnv(pod: V1Pod, container: V1Container, hostIP: string, imageEnv: Readonly<Record<string, string>> = {}, podIP = hostIP): Record<string, string> {
  const env: Record<string, string> = { PATH: basePath, HOSTNAME: pod.metadata?.name ?? '', HOME: '/root', ...imageEnv };
  const fields: Record<string, string> = {
    'metadata.name': pod.metadata?.name ?? '',
    'metadata.namespace': pod.metadata?.namespace ?? '',
    'metadata.uid': pod.metadata?.uid ?? '',
    'spec.nodeName': pod.spec?.nodeName ?? '',
    'spec.serviceAccountName': pod.spec?.serviceAccountName ?? '',
    'status.hostIP': hostIP,
    'status.podIP': podIP,
  };
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.fieldRef?.fieldPath;
    const labelRef = ref === undefined ? undefined : /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(ref);
    if (e.value !== undefined) env[e.name] = e.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string) => env[name] ?? m);
    else if (labelRef !== null && labelRef !== undefined) env[e.name] = (labelRef[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations)?.[labelRef[2] ?? ''] ?? '';
    else if (ref !== undefined) env[e.name] = fields[ref] ?? '';
  }
  return env;
}

/**
 * Bind mounts for the container's volumeMounts, from the sources the volume set-up made
 * (emptyDir from the pod dir, hostPath as is, secret files, a claim's PV directory). Without
 * `sources`, emptyDir and hostPath only.
 */
export function containerBinds(pod: V1Pod, container: V1Container, paths: PodPaths, sources?: ReadonlyMap<string, string>): BindMount[] {
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  const binds: BindMount[] = [];
  for (const m of container.volumeMounts ?? []) {
    const volume = volumes.get(m.name);
    let source: string | undefined = sources?.get(m.name);
    if (source === undefined && volume?.emptyDir !== undefined) source = paths.emptyDir(m.name);
    else if (source === undefined && volume?.hostPath !== undefined) source = volume.hostPath.path;
    if (source === undefined) throw new Error(`volume "${m.name}" has a type the testbed kubelet does not support`);
    if (m.subPath !== undefined && m.subPath !== '') source = join(source, m.subPath);
    binds.push({ source, target: m.mountPath, readOnly: m.readOnly === true, ...(m.mountPropagation === 'HostToContainer' ? { hostToContainer: true } : {}) });
  }
  return binds;
}
