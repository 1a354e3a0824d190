// Entry point of the interim main job (scripts/demo): boots the guest through podvirt's own
// libvirt client and shows what happens. Ctrl-C stops it cleanly.
import { bootGuestDemo } from './boot-guest-demo.js';

const controller = new AbortController();
process.once('SIGINT', () => controller.abort());
process.once('SIGTERM', () => controller.abort());

const started = Date.now();
const stamp = (): string => `${((Date.now() - started) / 1000).toFixed(2).padStart(6)}s`;
try {
  await bootGuestDemo(
    {
      step: (m) => process.stdout.write(`${stamp()}  ${m}\n`),
      detail: (m) => process.stdout.write(`${stamp()}      ${m}\n`),
    },
    controller.signal,
  );
} catch (err) {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
