import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NODE_API_SOCKET } from '@podvirt/proto';
import { parseDuration, parseHandlerArgs } from '../src/handler-args.js';
import { isHandlerError } from '../src/handler-error.js';
import { DEFAULT_MIGRATION_SETTINGS } from '../src/live-migration/migration-settings.js';

const DEFAULT_REST = {
  ghostRecordDir: '/var/run/podvirt-private/ghost-records',
  nodeApiSocket: NODE_API_SOCKET,
  nodeApiTls: undefined,
  httpAddress: '127.0.0.1',
  metricsPort: 8443,
  healthPort: 8443,
  metricsScrapeTimeoutMs: 3_000,
  ioErrorRetryIntervalMs: 10_000,
  heartbeatIntervalMs: 60_000,
  shutdownGraceMs: 15_000,
  devicePlugins: { dir: '/var/lib/kubelet/device-plugins', deviceRoot: '/', maxDevices: 1000 },
  migration: DEFAULT_MIGRATION_SETTINGS,
  migrationProxy: undefined,
};

test('defaults follow virt-handler; NODE_NAME fills --node-name', () => {
  assert.deepEqual(parseHandlerArgs([], { NODE_NAME: 'n1' }), {
    kubeconfig: undefined, nodeName: 'n1', podsDir: '/pods', workers: 10, watchdogMs: 30_000, resyncPeriodMs: 300_000, ...DEFAULT_REST,
  });
  const args = parseHandlerArgs(
    ['--kubeconfig', 'kc.yaml', '--node-name', 'n2', '--pods-dir', '/p', '--workers', '3', '--watchdog-timeout', '500ms', '--resync-period', '1m'],
    { NODE_NAME: 'ignored' },
  );
  assert.deepEqual(args, { kubeconfig: 'kc.yaml', nodeName: 'n2', podsDir: '/p', workers: 3, watchdogMs: 500, resyncPeriodMs: 60_000, ...DEFAULT_REST });
});

test('node API, ghost records, HTTP endpoints, heartbeat and shutdown flags', () => {
  const args = parseHandlerArgs([
    '--ghost-record-dir', '/g', '--node-api-socket', '/s/node.sock',
    '--node-api-tls-port', '8186', '--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--tls-client-ca', 'ca.pem',
    '--tls-allowed-client', 'CN=podvirtctl', '--tls-allowed-client', 'URI:spiffe://cluster/ops',
    '--http-address', '0.0.0.0', '--metrics-port', '0', '--health-port', '9000',
    '--heartbeat-interval', '2s', '--shutdown-grace', '3s',
  ], { NODE_NAME: 'n' });
  assert.equal(args.ghostRecordDir, '/g');
  assert.equal(args.nodeApiSocket, '/s/node.sock');
  assert.deepEqual(args.nodeApiTls, {
    address: '0.0.0.0', port: 8186, certFile: 'c.pem', keyFile: 'k.pem', clientCaFile: 'ca.pem', allowedClients: ['CN=podvirtctl', 'URI:spiffe://cluster/ops'],
  });
  assert.equal(args.httpAddress, '0.0.0.0');
  assert.equal(args.metricsPort, 0);
  assert.equal(args.healthPort, 9000);
  assert.equal(args.heartbeatIntervalMs, 2_000);
  assert.equal(args.shutdownGraceMs, 3_000);
});

test('--metrics-scrape-timeout: a duration above 0 and at most a minute, refused by name otherwise', () => {
  assert.equal(parseHandlerArgs(['--metrics-scrape-timeout', '500ms'], { NODE_NAME: 'n' }).metricsScrapeTimeoutMs, 500);
  assert.equal(parseHandlerArgs(['--metrics-scrape-timeout=1m'], { NODE_NAME: 'n' }).metricsScrapeTimeoutMs, 60_000);
  for (const [text, why] of [['0s', /must be more than 0/], ['61s', /at most 1m/], ['soon', /./], ['-1s', /./]] as const) {
    assert.throws(() => parseHandlerArgs(['--metrics-scrape-timeout', text], { NODE_NAME: 'n' }), (err) => {
      assert.ok(isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS'), String(err));
      assert.match(err.message, /--metrics-scrape-timeout/);
      assert.match(err.message, why);
      return true;
    });
  }
});

test('--io-error-retry-interval: KubeVirt\'s 10 s by default, a duration above 0 and at most 3 min, refused by name otherwise', () => {
  assert.equal(parseHandlerArgs(['--io-error-retry-interval', '2s'], { NODE_NAME: 'n' }).ioErrorRetryIntervalMs, 2_000);
  assert.equal(parseHandlerArgs(['--io-error-retry-interval=3m'], { NODE_NAME: 'n' }).ioErrorRetryIntervalMs, 180_000);
  for (const [text, why] of [['0s', /must be more than 0/], ['181s', /at most 3m/], ['soon', /./]] as const) {
    assert.throws(() => parseHandlerArgs(['--io-error-retry-interval', text], { NODE_NAME: 'n' }), (err) => {
      assert.ok(isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS'), String(err));
      assert.match(err.message, /--io-error-retry-interval/);
      assert.match(err.message, why);
      return true;
    });
  }
});

test('bad flags are HANDLER_ERR_INVALID_ARGS', () => {
  const bad = (argv: string[], env: Record<string, string> = { NODE_NAME: 'n' }) =>
    assert.throws(() => parseHandlerArgs(argv, env), (err) => isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS'));
  bad([], {});
  bad(['--workers', '0']);
  bad(['--watchdog-timeout', 'soon']);
  bad(['--resync-period', '0s']);
  bad(['--frobnicate']);
  bad(['--metrics-port', '70000']);
  bad(['--health-port', '-1']);
  // TLS without client certificates would let anyone on the network pause VMs.
  bad(['--node-api-tls-port', '8186', '--tls-cert', 'c', '--tls-key', 'k']);
  bad(['--tls-cert', 'c']);
  // Any certificate the CA signed, the server's own included, would get in without a list.
  bad(['--node-api-tls-port', '8186', '--tls-cert', 'c', '--tls-key', 'k', '--tls-client-ca', 'ca']);
  bad(['--node-api-tls-port', '8186', '--tls-cert', 'c', '--tls-key', 'k', '--tls-client-ca', 'ca', '--tls-allowed-client', 'podvirtctl']);
  bad(['--tls-allowed-client', 'CN=x']);
  bad(['--workers', '0']);
  bad(['--workers', '2.5']);
  assert.equal(parseDuration('x', '2'), 2_000);
  assert.equal(parseDuration('x', '1.5h'), 5_400_000);
});

test('device plugin flags: directory, device root, count, off switch; a bad count is refused by name', () => {
  const args = parseHandlerArgs(['--device-plugins-dir', '/dp', '--device-root', '/host', '--max-devices', '10'], { NODE_NAME: 'n' });
  assert.deepEqual(args.devicePlugins, { dir: '/dp', deviceRoot: '/host', maxDevices: 10 });
  assert.equal(parseHandlerArgs(['--disable-device-plugins'], { NODE_NAME: 'n' }).devicePlugins, undefined);
  for (const bad of ['0', '-1', '1.5', 'many', '100001']) {
    assert.throws(() => parseHandlerArgs(['--max-devices', bad], { NODE_NAME: 'n' }), (err: unknown) =>
      isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS') && err.message.includes('--max-devices'));
  }
});

test('every duration flag is bounded by what a timer can wait, and the refusal names the flag', () => {
  const flags = ['--watchdog-timeout', '--resync-period', '--heartbeat-interval', '--shutdown-grace', '--migration-progress-timeout', '--migration-completion-timeout-per-gib'];
  for (const flag of flags) {
    assert.throws(() => parseHandlerArgs([flag, '40000m'], { NODE_NAME: 'n' }), (err: unknown) =>
      isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS') && err.message === `${flag}: "40000m" is too long`);
    // 2^31-1 ms is the longest a timer takes: just under 596h31m24s.
    assert.doesNotThrow(() => parseHandlerArgs([flag, '596h31m23s'], { NODE_NAME: 'n' }));
  }
});
