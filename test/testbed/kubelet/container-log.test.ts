// Reading a container's CRI log as `kubectl logs` shows it: a long line a runtime wrote as
// partial entries comes back as one line.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { readContainerLog } from './container-log.js';

async function readLog(content: string, options: { timestamps?: boolean; tailLines?: number } = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-log-'));
  try {
    const path = join(dir, '0.log');
    await writeFile(path, content);
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await readContainerLog(path, out, { timestamps: options.timestamps ?? false, tailLines: options.tailLines });
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const t1 = '2026-01-01T00:00:01.000000000Z';
const t2 = '2026-01-01T00:00:02.000000000Z';

void test('partial entries are joined with their final entry into one line, per stream', async () => {
  const log = [
    `${t1} stdout P {"msg":"a long`,
    `${t1} stderr F an error between the parts`,
    `${t2} stdout P  line cut`,
    `${t2} stdout F  twice"}`,
    `${t2} stdout F short`,
    '',
  ].join('\n');
  assert.equal(await readLog(log), 'an error between the parts\n{"msg":"a long line cut twice"}\nshort\n');
});

void test('a joined line carries the time of its first entry and counts once for tailLines', async () => {
  const log = [`${t1} stdout F first`, `${t1} stdout P second `, `${t2} stdout F half`, ''].join('\n');
  assert.equal(await readLog(log, { timestamps: true, tailLines: 1 }), `${t1} second half\n`);
});

void test('a partial entry with no final entry yet is not shown', async () => {
  assert.equal(await readLog(`${t1} stdout F done\n${t2} stdout P still writ\n`), 'done\n');
});
