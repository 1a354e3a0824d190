// closeOnSignal in a process of its own: a stop signal closes what is open, newest first, and
// the process then ends by that signal; what was forgotten (closed before) is not closed again;
// a process with its own handler closes in its own way; once nothing is open no listener is left.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { closeOnSignal } from './close-on-signal.js';

const moduleUrl = new URL('./close-on-signal.js', import.meta.url).href;

/** Runs `body` (after closeOnSignal is imported) in a node process, SIGTERMs it once it printed `ready`. */
async function terminated(body: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: string[] }> {
  const script = `const { closeOnSignal } = await import(${JSON.stringify(moduleUrl)});\n${body}\nprocess.stdout.write('ready\\n');\nsetInterval(() => undefined, 1000);`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise<void>((resolve) => proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('ready\n')) resolve();
  }));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  // A script that dies before it is ready ends the wait too (its exit is then what is checked).
  await Promise.race([ready, exited]);
  proc.kill('SIGTERM');
  const end = await exited;
  clearTimeout(timer);
  return { ...end, lines: out.trim().split('\n') };
}

test('a stop signal closes what is open, newest first, then ends the process by that signal', async () => {
  const end = await terminated(`
const slowly = (name) => async () => { await new Promise((r) => setTimeout(r, 50)); process.stdout.write(name + '\\n'); };
closeOnSignal(slowly('testbed'));
const forget = closeOnSignal(slowly('gone'));
forget();
closeOnSignal(slowly('stack'));`);
  assert.deepEqual(end, { code: null, signal: 'SIGTERM', lines: ['ready', 'stack', 'testbed'] });
});

test('a process that handles the signal itself is left to close in its own way', async () => {
  const end = await terminated(`
process.once('SIGTERM', () => { process.stdout.write('own handler\\n'); setTimeout(() => process.exit(7), 50); });
closeOnSignal(async () => { process.stdout.write('closed\\n'); });`);
  assert.deepEqual(end, { code: 7, signal: null, lines: ['ready', 'own handler'] });
});

test('forgetting every closer leaves no signal listener behind', () => {
  const before = process.listenerCount('SIGTERM');
  const forgetA = closeOnSignal(() => Promise.resolve());
  const forgetB = closeOnSignal(() => Promise.resolve());
  assert.equal(process.listenerCount('SIGTERM'), before + 1);
  forgetA();
  forgetA();
  assert.equal(process.listenerCount('SIGTERM'), before + 1);
  forgetB();
  assert.equal(process.listenerCount('SIGTERM'), before);
});
