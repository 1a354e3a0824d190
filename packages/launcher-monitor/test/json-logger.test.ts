import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLogLevel, JsonLogger } from '../src/json-logger.js';
import { MonitorError } from '../src/monitor-error.js';

function capture(level?: 'debug' | 'info' | 'warn' | 'error') {
  const lines: Record<string, unknown>[] = [];
  const log = new JsonLogger({
    bindings: { component: 'virt-launcher-monitor' },
    write: (line) => {
      assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'), 'one line per entry');
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
    now: () => 1_700_000_000_000,
    ...(level === undefined ? {} : { level }),
  });
  return { log, lines };
}

test('writes pino-shaped lines: level, time, bindings, fields, msg', () => {
  const { log, lines } = capture();
  log.info({ pid: 7 }, 'launcher started');
  assert.deepEqual(lines, [{ level: 30, time: 1_700_000_000_000, component: 'virt-launcher-monitor', pid: 7, msg: 'launcher started' }]);
});

test('drops lines below the level and keeps the level in children', () => {
  const { log, lines } = capture('warn');
  log.info({}, 'quiet');
  log.child({ vmi: 'a' }).info({}, 'quiet too');
  log.child({ vmi: 'a' }).error({}, 'loud');
  assert.deepEqual(lines.map((l) => [l['level'], l['msg'], l['vmi']]), [[50, 'loud', 'a']]);
});

test('serializes errors with type, message, stack, code and cause', () => {
  const { log, lines } = capture();
  const cause = Object.assign(new Error('spawn x ENOENT'), { code: 'ENOENT', errno: -2, syscall: 'spawn x' });
  log.error({ err: new MonitorError('MONITOR_ERR_SPAWN', 'cannot start', { cause }) }, 'failed');
  const err = lines[0]?.['err'] as Record<string, unknown>;
  assert.equal(err['type'], 'MonitorError');
  assert.equal(err['message'], 'cannot start');
  assert.equal(err['code'], 'MONITOR_ERR_SPAWN');
  assert.match(String(err['stack']), /MonitorError/);
  assert.deepEqual({ ...(err['cause'] as object), stack: undefined }, {
    type: 'Error', message: 'spawn x ENOENT', code: 'ENOENT', errno: -2, syscall: 'spawn x', stack: undefined,
  });
});

test('recognizes level names', () => {
  assert.equal(isLogLevel('debug'), true);
  assert.equal(isLogLevel('trace'), false);
  assert.equal(isLogLevel('toString'), false);
});
