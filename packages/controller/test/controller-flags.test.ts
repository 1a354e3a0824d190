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
      logLevel: 'info',
      httpAddress: '127.0.0.1',
      metricsPort: 8443,
    });
  });

  test('every flag', () => {
    const flags = parseControllerFlags([
      '--kubeconfig', '/k', '--launcher-image=img:1', '--allow-emulation', '--namespace', 'vms',
      '--workers', '8', '--leader-elect', '--lease-namespace', 'podvirt', '--lease-name', 'ctl', '--log-level', 'debug',
      '--http-address', '10.0.0.5', '--metrics-port', '0',
    ]);
    assert.deepEqual(flags, {
      kubeconfig: '/k', launcherImage: 'img:1', allowEmulation: true, namespace: 'vms', workers: 8,
      leaderElect: true, leaseNamespace: 'podvirt', leaseName: 'ctl', logLevel: 'debug',
      httpAddress: '10.0.0.5', metricsPort: 0,
    });
  });

  for (const argv of [['--workers', '0'], ['--workers', 'many'], ['--metrics-port', '70000'], ['--metrics-port', 'x'], ['--bogus'], ['positional']]) {
    test(`refuses ${argv.join(' ')}`, () => {
      assert.throws(() => parseControllerFlags(argv), { code: 'CONTROLLER_ERR_BAD_FLAG' });
    });
  }
});
