// --timeout for the commands that talk to the Kubernetes API server (the subresources, the VM and
// volume requests, migrations), as the node API's deadline bounds a node call: the whole command,
// however many requests and throttling retries it makes, ends at the deadline with an error that
// names it. A stalled API server, aggregated podvirt-api or credential plugin otherwise held
// podvirtctl for the client's own 30 s per request, or for ever.
import { formatDuration } from '@podvirt/api/duration';
import { isKubeClientError } from '@podvirt/kube-runtime';

export class ApiTimeoutError extends Error {
  readonly code = 'CTL_ERR_API_TIMEOUT';
  readonly timeoutMs: number;

  constructor(timeoutMs: number, options?: ErrorOptions) {
    super(`no answer from the API server within ${formatDuration(timeoutMs)} (--timeout)`, options);
    this.name = 'ApiTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Runs `work` under `signal` (the user's Ctrl+C) and a deadline of `timeoutMs`: past it the signal
 * given to `work` aborts and the command rejects with ApiTimeoutError at once, even if `work`
 * ignores the signal. A request's own timeout (KUBE_ERR_TIMEOUT) is the same deadline reached.
 */
export async function withApiDeadline<T>(signal: AbortSignal, timeoutMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = new AbortController();
  let expire!: () => void;
  const expired = new Promise<never>((_, reject) => {
    expire = () => reject(new ApiTimeoutError(timeoutMs));
  });
  // On the global setTimeout, which mock.timers fakes.
  const timer = setTimeout(() => {
    deadline.abort();
    expire();
  }, timeoutMs);
  expired.catch(() => undefined);
  try {
    return await Promise.race([work(AbortSignal.any([signal, deadline.signal])), expired]);
  } catch (err) {
    if (signal.aborted || err instanceof ApiTimeoutError) throw err;
    if (deadline.signal.aborted || isKubeClientError(err, 'KUBE_ERR_TIMEOUT')) throw new ApiTimeoutError(timeoutMs, { cause: err });
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
