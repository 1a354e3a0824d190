import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseControllerFlags } from '../src/controller-flags.js';

describe('parseControllerFlags', () => {
  test('defaults', () => {
    assert.deepEqual(parseControllerFlags([]), {
      kubeconfig: undefined,
      launcherImage: undefined,
      allowEmulation: false,
      namespace: undefined,
      workers: 3,
      leaderElect: false,
      leaseNamespace: 'kube-system',
      leaseName: 'podvirt-controller',
      leaderElection: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      logLevel: 'info',
      httpAddress: '127.0.0.1',
      metricsPort: 8443,
      hostDisk: { enabled: false, allowedDirs: [] },
      evictionStrategy: 'None',
      nodeHeartbeatTimeoutMs: 300_000,
      migrationUnschedulableTimeoutMs: 300_000,
    });
  });

  test('every flag', () => {
    const flags = parseControllerFlags([
      '--kubeconfig', '/k', '--launcher-image=img:1', '--allow-emulation', '--namespace', 'vms',
      '--workers', '8', '--leader-elect', '--lease-namespace', 'podvirt', '--lease-name', 'ctl', '--log-level', 'debug',
      '--leader-elect-lease-duration', '1m', '--leader-elect-renew-deadline=40s', '--leader-elect-retry-period', '1.5s',
      '--http-address', '10.0.0.5', '--metrics-port', '0',
      '--feature-gates=HostDisk', '--host-disk-allowed-dir', '/var/data', '--host-disk-allowed-dir=/srv/vm-disks',
      '--eviction-strategy=LiveMigrate', '--node-heartbeat-timeout', '90s', '--migration-unschedulable-timeout=20s',
    ]);
    assert.deepEqual(flags, {
      kubeconfig: '/k', launcherImage: 'img:1', allowEmulation: true, namespace: 'vms', workers: 8,
      leaderElect: true, leaseNamespace: 'podvirt', leaseName: 'ctl', logLevel: 'debug',
      leaderElection: { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 1_500 },
      httpAddress: '10.0.0.5', metricsPort: 0,
      hostDisk: { enabled: true, allowedDirs: ['/var/data', '/srv/vm-disks'] },
      evictionStrategy: 'LiveMigrate',
      nodeHeartbeatTimeoutMs: 90_000,
      migrationUnschedulableTimeoutMs: 20_000,
    });
  });

  test('--feature-gates takes KubeVirt\'s names and a Kubernetes component\'s Name=bool, the last word winning', () => {
    const gate = (...argv: string[]): boolean => parseControllerFlags(argv).hostDisk.enabled;
    assert.equal(gate('--feature-gates=HostDisk'), true);
    assert.equal(gate('--feature-gates', 'HostDisk=true'), true);
    assert.equal(gate('--feature-gates=HostDisk=false'), false);
    assert.equal(gate('--feature-gates=HostDisk', '--feature-gates=HostDisk=false'), false);
    assert.equal(gate('--feature-gates=HostDisk=false,HostDisk'), true);
    assert.equal(gate('--feature-gates='), false);
  });

  const refusals: Array<[string[], RegExp]> = [
    [['--feature-gates=HostDisks'], /unknown feature gate "HostDisks"; known: HostDisk/],
    [['--feature-gates=HostDisk=yes'], /"HostDisk=yes" must be HostDisk or HostDisk=true\|false/],
    [['--host-disk-allowed-dir=var/data'], /--host-disk-allowed-dir=var\/data: must be an absolute path/],
    [['--host-disk-allowed-dir=/var/data/../etc'], /must not contain "\.\."/],
    [['--host-disk-allowed-dir=/var//data'], /write it as \/var\/data$/],
    [['--host-disk-allowed-dir=/var/data/'], /write it as \/var\/data$/],
    [['--host-disk-allowed-dir=/'], /would allow every file of the node/],
    [['--eviction-strategy=Migrate'], /^--eviction-strategy: "Migrate" is not one of None, LiveMigrate, LiveMigrateIfPossible, External$/],
    [['--node-heartbeat-timeout=0s'], /^--node-heartbeat-timeout must be more than 0, got 0s$/],
    [['--node-heartbeat-timeout=soon'], /node-heartbeat-timeout/],
    [['--migration-unschedulable-timeout=0s'], /^--migration-unschedulable-timeout must be more than 0, got 0s$/],
    [['--migration-unschedulable-timeout=later'], /migration-unschedulable-timeout/],
    [['--leader-elect-lease-duration=soon'], /leader-elect-lease-duration/],
    [['--leader-elect-retry-period=-2s'], /leader-elect-retry-period/],
    [['--leader-elect-retry-period=0s'], /--leader-elect-retry-period must be more than 0/],
    [['--leader-elect-lease-duration=1500ms'], /--leader-elect-lease-duration must be a whole number of seconds, at least 1s .*got 1500ms/],
    [['--leader-elect-lease-duration=0s'], /--leader-elect-lease-duration must be a whole number of seconds, at least 1s/],
    [['--leader-elect-lease-duration=10s'], /--leader-elect-renew-deadline \(10s\) must be shorter than --leader-elect-lease-duration \(10s\)/],
    [['--leader-elect-renew-deadline=2400ms'], /--leader-elect-renew-deadline \(2400ms\) must be longer than 1\.2 × --leader-elect-retry-period \(2s\)/],
    [['--leader-elect-retry-period=9s'], /must be longer than 1\.2 × --leader-elect-retry-period \(9s\)/],
  ];
  for (const [argv, message] of refusals) {
    test(`refuses ${argv.join(' ')} naming the flag`, () => {
      assert.throws(() => parseControllerFlags(argv), (err: unknown) => (err as { code?: string }).code === 'CONTROLLER_ERR_BAD_FLAG' && message.test((err as Error).message));
    });
  }

  for (const argv of [['--workers', '0'], ['--workers', 'many'], ['--workers', '65'], ['--workers', '1e1'], ['--metrics-port', '70000'], ['--metrics-port', 'x'], ['--bogus'], ['positional']]) {
    test(`refuses ${argv.join(' ')}`, () => {
      assert.throws(() => parseControllerFlags(argv), { code: 'CONTROLLER_ERR_BAD_FLAG' });
    });
  }
});
