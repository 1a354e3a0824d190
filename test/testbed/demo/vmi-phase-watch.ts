// The demo's view of VMIs: a watch that prints every phase change as it happens and lets the
// demo wait for a phase (a short-lived phase such as Succeeded is seen on the watch even when
// the VMI is gone a moment later).
import { CustomObjectsApi, ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';

type Vmi = KubernetesObject & { status?: { phase?: string } };

export class VmiPhaseWatch {
  readonly #informer: ListWatch<Vmi>;
  readonly #seen = new Map<string, string[]>();
  readonly #waiters = new Set<() => void>();

  constructor(kubeConfig: KubeConfig, namespace: string, onPhase: (name: string, phase: string) => void) {
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const list = async (): Promise<KubernetesListObject<Vmi>> =>
      (await custom.listNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstances', namespace })) as KubernetesListObject<Vmi>;
    this.#informer = new ListWatch<Vmi>(`/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`, new Watch(kubeConfig), list, false);
    const record = (vmi: Vmi): void => {
      const name = vmi.metadata?.name ?? '';
      const phase = vmi.status?.phase;
      const phases = this.#seen.get(name) ?? [];
      if (phase === undefined || phase === '' || phases.at(-1) === phase) return;
      phases.push(phase);
      this.#seen.set(name, phases);
      onPhase(name, phase);
      for (const wake of this.#waiters) wake();
    };
    this.#informer.on('add', record);
    this.#informer.on('update', record);
    this.#informer.on('error', () => {
      // ListWatch restarts itself; its re-list covers the gap.
    });
  }

  start(): Promise<void> {
    return this.#informer.start();
  }

  /** Resolves once `name` has been seen in `phase`; rejects after `timeoutMs` or on abort. */
  async waitFor(name: string, phase: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#seen.get(name)?.includes(phase) === true) return;
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        signal?.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      const check = (): void => {
        if (this.#seen.get(name)?.includes(phase) === true) done();
      };
      const onAbort = (): void => done(new Error('demo interrupted'));
      const timer = setTimeout(() => done(new Error(`VMI ${name} did not reach ${phase} within ${timeoutMs / 1000} s`)), timeoutMs);
      this.#waiters.add(check);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  stop(): Promise<void> {
    return this.#informer.stop();
  }
}
