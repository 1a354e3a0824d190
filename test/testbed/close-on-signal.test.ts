// closeOnSignal in a process of its own: a stop signal closes what is open, newest first, and
// the process then ends by that signal; what was forgotten (closed before) is not closed again,
// and once nothing is open no listener is left.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { closeOnSignal } from './close-on-signal.js';

const moduleUrl = new URL('./close-on-signal.js', import.meta.url).href;

const child = `
const { closeOnSignal } = await import(${JSON.stringify(moduleUrl)});
const slowly = (name) => async () => { await new Promise((r) => setTimeout(r, 50)); process.stdout.write(name + '\\n'); };
closeOnSignal(slowly('testbed'));
const forget = closeOnSignal(slowly('gone'));
forget();
closeOnSignal(slowly('stack'));
process.stdout.write('ready\\n');
setInterval(() => undefined, 1000);
`;

test('a stop signal closes what is open, newest first, then ends the process by that signal', async () => {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', child], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise<void>((resolve) => proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('ready\n')) resolve();
  }));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  await ready;
  proc.kill('SIGTERM');
  const end = await exited;
  clearTimeout(timer);
  assert.deepEqual(end, { code: null, signal: 'SIGTERM' });
  assert.deepEqual(out.trim().split('\n'), ['ready', 'stack', 'testbed']);
});

test('a process that handles the signal itself is left to close in its own way', async () => {
  const own = `
const { closeOnSignal } = await import(${JSON.stringify(moduleUrl)});
process.once('SIGTERM', () => { process.stdout.write('own handler\\n'); setTimeout(() => process.exit(7), 50); });
closeOnSignal(async () => { process.stdout.write('closed\\n'); });
process.stdout.write('ready\\n');
setInterval(() => undefined, 1000);
`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', own], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise<void>((resolve) => proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('ready\n')) resolve();
  }));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  await ready;
  proc.kill('SIGTERM');
  const end = await exited;
  clearTimeout(timer);
  assert.deepEqual(end, { code: 7, signal: null });
  assert.deepEqual(out.trim().split('\n'), ['ready', 'own handler']);
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
