// Reads a raw watch stream: newline-delimited JSON events over a chunked response.
export interface WatchEvent {
  type: string;
  object: Record<string, unknown> & { metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> } };
}

export interface WatchStream {
  /** Resolves once `predicate` holds over the events seen so far (or rejects after `timeoutMs`). */
  until(predicate: (events: WatchEvent[]) => boolean, timeoutMs?: number): Promise<WatchEvent[]>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export async function openWatch(url: string): Promise<WatchStream> {
  const abort = new AbortController();
  const res = await fetch(url, { signal: abort.signal });
  if (res.body === null) throw new Error(`watch ${url} has no body (${res.status})`);
  const events: WatchEvent[] = [];
  const waiters = new Set<() => void>();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const ended = (async () => {
    let buffered = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += value;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buffered.slice(0, nl)) as WatchEvent);
          buffered = buffered.slice(nl + 1);
        }
        for (const w of [...waiters]) w();
      }
    } catch {
      // aborted by close()
    }
    for (const w of [...waiters]) w();
  })();
  let finished = false;
  void ended.then(() => {
    finished = true;
  });
  return {
    ended,
    close: () => abort.abort(),
    until(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (predicate(events)) {
            cleanup();
            resolve([...events]);
          } else if (finished) {
            cleanup();
            reject(new Error(`watch ended without the expected events: ${JSON.stringify(events.map((e) => e.type))}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out; events so far: ${JSON.stringify(events.map((e) => [e.type, e.object.metadata?.name]))}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
