// Polls a condition until it holds or the time runs out: for asynchronous effects (stream
// messages, probes) that a test cannot await directly.

export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 3_000, stepMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
