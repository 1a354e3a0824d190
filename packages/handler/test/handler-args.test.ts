import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration, parseHandlerArgs } from '../src/handler-args.js';
import { isHandlerError } from '../src/handler-error.js';

test('defaults follow virt-handler; NODE_NAME fills --node-name', () => {
  assert.deepEqual(parseHandlerArgs([], { NODE_NAME: 'n1' }), {
    kubeconfig: undefined, nodeName: 'n1', podsDir: '/pods', workers: 10, watchdogMs: 30_000, resyncPeriodMs: 300_000,
  });
  const args = parseHandlerArgs(
    ['--kubeconfig', 'kc.yaml', '--node-name', 'n2', '--pods-dir', '/p', '--workers', '3', '--watchdog-timeout', '500ms', '--resync-period', '1m'],
    { NODE_NAME: 'ignored' },
  );
  assert.deepEqual(args, { kubeconfig: 'kc.yaml', nodeName: 'n2', podsDir: '/p', workers: 3, watchdogMs: 500, resyncPeriodMs: 60_000 });
});

test('bad flags are HANDLER_ERR_INVALID_ARGS', () => {
  const bad = (argv: string[], env: Record<string, string> = { NODE_NAME: 'n' }) =>
    assert.throws(() => parseHandlerArgs(argv, env), (err) => isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS'));
  bad([], {});
  bad(['--workers', '0']);
  bad(['--watchdog-timeout', 'soon']);
  bad(['--resync-period', '0s']);
  bad(['--frobnicate']);
  assert.equal(parseDuration('x', '2'), 2_000);
  assert.equal(parseDuration('x', '1.5h'), 5_400_000);
});
