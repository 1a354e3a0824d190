#!/usr/bin/env node
// Steady-state memory of the launcher monitor: starts the built monitor with a launcher that
// just sleeps, lets it settle, and reads /proc/<pid>/smaps_rollup, once per set of Node
// options. Baselines (a bare idle Node, and Node with pino loaded when the workspace has it)
// show what the monitor's own code and a logger cost on top of the runtime.
//
//   node packages/launcher-monitor/bench/memory.mjs [--settle-ms 3000] [--runs 2] [--json]
//
// Read "Anonymous" as the figure that is the monitor's own: Rss and Pss also count the node
// executable's pages, which every node process in the same container (the launcher too) shares,
// so Pss drops as more of them run and is noisy on a busy machine.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const main = join(here, '..', 'dist', 'src', 'main.js');
const { values } = parseArgs({
  options: {
    'settle-ms': { type: 'string', default: '3000' },
    runs: { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
  },
});
const settleMs = Number(values['settle-ms']);
const runs = Number(values.runs);

const OPTION_SETS = [
  [],
  ['--max-old-space-size=16', '--max-semi-space-size=1'],
  ['--v8-pool-size=0'],
  ['--single-threaded'],
  ['--jitless'],
  ['--lite-mode'],
  ['--max-old-space-size=16', '--max-semi-space-size=1', '--v8-pool-size=0', '--single-threaded', '--lite-mode'],
];
const FIELDS = ['Rss', 'Pss', 'Pss_Anon', 'Pss_File', 'Anonymous'];

function readRollup(pid) {
  const out = {};
  for (const line of readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').split('\n')) {
    const match = /^(\w+):\s+(\d+) kB/.exec(line);
    if (match && FIELDS.includes(match[1])) out[match[1]] = Number(match[2]);
  }
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  out.Threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1]);
  return out;
}

async function measure(label, nodeArgs, args) {
  const child = spawn(process.execPath, [...nodeArgs, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    await sleep(settleMs);
    if (child.exitCode !== null) throw new Error(`${label} exited early with ${child.exitCode}`);
    return { label, nodeArgs: nodeArgs.join(' '), ...readRollup(child.pid) };
  } finally {
    child.kill('SIGTERM'); // the monitor forwards it; the sleeping launcher exits
    const killed = sleep(5_000, undefined, { ref: false }).then(() => child.kill('SIGKILL'));
    await Promise.race([exited, killed]);
    await exited;
  }
}

function pinoProgram() {
  // The monitor does not depend on pino; the workspace's test package does.
  try {
    const url = createRequire(join(here, '..', '..', '..', 'test', 'package.json')).resolve('pino');
    return `const {pino}=require(${JSON.stringify(url)});pino({base:{component:'x'}},pino.destination({fd:1,sync:true})).info('hi');setInterval(()=>{},1e9)`;
  } catch {
    return undefined;
  }
}

const results = [];
for (let run = 0; run < runs; run++) {
  results.push(await measure('bare node, idle', [], ['-e', 'setInterval(() => {}, 1e9)']));
  const pino = pinoProgram();
  if (pino) results.push(await measure('node + pino sync logger, idle', [], ['-e', pino]));
  for (const nodeArgs of OPTION_SETS) {
    results.push(await measure('monitor + sleeping launcher', nodeArgs, [main, '--launcher-bin', 'sleep', '3600']));
  }
}

if (values.json) {
  console.log(JSON.stringify(results, null, 2));
} else {
  const head = ['what', 'node options', ...FIELDS.map((f) => `${f} kB`), 'Threads'];
  const rows = results.map((r) => [r.label, r.nodeArgs || '(none)', ...FIELDS.map((f) => String(r[f])), String(r.Threads)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  for (const row of [head, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  '));
}
