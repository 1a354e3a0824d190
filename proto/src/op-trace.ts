// A call's steps timed for a benchmark (test/bench/vmi-start-stages.ts prints them): a server
// traces only when its process runs with PODVIRT_TRACE_OPS=1 (it then gives the unary adapter an
// `onTrace`), so a server that is not traced makes no trace and pays one check per call. The
// adapter starts one per call and hands it to the method (UnaryContext.trace); the method marks
// each await on its answer's path.

/** One traced call: each step's end, ms after the call reached the server's adapter. */
export class OpTrace {
  readonly #t0 = performance.now();
  readonly steps: { step: string; ms: number }[] = [];

  mark(step: string): void {
    this.steps.push({ step, ms: Math.round((performance.now() - this.#t0) * 1000) / 1000 });
  }
}

/** Whether this process traces its calls (read once: the environment does not change). */
export const OP_TRACE_ON = process.env['PODVIRT_TRACE_OPS'] === '1';
