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
    });
  });

  test('every flag', () => {
    const flags = parseControllerFlags([
      '--kubeconfig', '/k', '--launcher-image=img:1', '--allow-emulation', '--namespace', 'vms',
      '--workers', '8', '--leader-elect', '--lease-namespace', 'podvirt', '--lease-name', 'ctl', '--log-level', 'debug',
    ]);
    assert.deepEqual(flags, {
      kubeconfig: '/k', launcherImage: 'img:1', allowEmulation: true, namespace: 'vms', workers: 8,
      leaderElect: true, leaseNamespace: 'podvirt', leaseName: 'ctl', logLevel: 'debug',
    });
  });

  for (const argv of [['--workers', '0'], ['--workers', 'many'], ['--workers', '65'], ['--workers', '1e1'], ['--bogus'], ['positional']]) {
    test(`refuses ${argv.join(' ')}`, () => {
      assert.throws(() => parseControllerFlags(argv), { code: 'CONTROLLER_ERR_BAD_FLAG' });
    });
  }
});
