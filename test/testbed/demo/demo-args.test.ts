import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DemoUsageError, parseDemoArgs } from './demo-args.js';

test('each mode with the options it takes', () => {
  assert.deepEqual(parseDemoArgs([]), { mode: 'vmi', runtime: 'process', controlPlane: 'testbed', node: 'testbed' });
  assert.deepEqual(parseDemoArgs(['--images']), { mode: 'vmi', runtime: 'image', controlPlane: 'testbed', node: 'testbed' });
  assert.deepEqual(parseDemoArgs(['--control-plane', 'real']), { mode: 'vmi', runtime: 'process', controlPlane: 'real', node: 'testbed' });
  assert.deepEqual(parseDemoArgs(['--migrate', '--control-plane=real']), { mode: 'migrate', controlPlane: 'real' });
  assert.deepEqual(parseDemoArgs(['--network']), { mode: 'network', controlPlane: 'testbed' });
  assert.deepEqual(parseDemoArgs(['--libvirt-only']), { mode: 'libvirt-only' });
  assert.deepEqual(parseDemoArgs(['up']), { mode: 'up', nodes: 1, controlPlane: 'testbed', node: 'testbed', controllerArgs: [] });
  assert.deepEqual(parseDemoArgs(['up', '--nodes', '2', '--control-plane', 'real']), { mode: 'up', nodes: 2, controlPlane: 'real', node: 'testbed', controllerArgs: [] });
  assert.deepEqual(parseDemoArgs(['--control-plane', 'real', 'serve']), { mode: 'serve', nodes: 1, controlPlane: 'real', node: 'testbed', controllerArgs: [] });
  assert.deepEqual(parseDemoArgs(['up', '--', '--feature-gates=HostDisk', '--nodes']), { mode: 'up', nodes: 1, controlPlane: 'testbed', node: 'testbed', controllerArgs: ['--feature-gates=HostDisk', '--nodes'] });
  assert.deepEqual(parseDemoArgs(['down']), { mode: 'down' });
  // The real node implies the real control plane.
  assert.deepEqual(parseDemoArgs(['--node', 'real']), { mode: 'vmi', runtime: 'process', controlPlane: 'real', node: 'real' });
  assert.deepEqual(parseDemoArgs(['--node=real', '--control-plane', 'real']), { mode: 'vmi', runtime: 'process', controlPlane: 'real', node: 'real' });
  assert.deepEqual(parseDemoArgs(['up', '--node', 'real']), { mode: 'up', nodes: 1, controlPlane: 'real', node: 'real', controllerArgs: [] });
});

test('a flag it does not know, or one the mode does not take, is refused by name', () => {
  const refused = (args: string[], message: RegExp): void => {
    assert.throws(() => parseDemoArgs(args), (err: unknown) => {
      assert.ok(err instanceof DemoUsageError);
      assert.equal(err.code, 'DEMO_USAGE');
      assert.match(err.message, message);
      assert.match(err.message, /usage: scripts\/demo/);
      return true;
    });
  };
  refused(['--control-plan', 'real'], /--control-plan/);
  refused(['up', '--node', '2'], /--node is testbed .* or real .*not "2"/);
  refused(['--node', 'real', '--control-plane', 'testbed'], /--control-plane testbed does not apply to --node real/);
  refused(['up', '--node', 'real', '--nodes', '2'], /--nodes does not apply to --node real/);
  refused(['--node', 'real', '--images'], /--node real does not apply to --images/);
  refused(['up', '--node', 'real', '--', '--feature-gates=HostDisk'], /--node real does not apply to flags after --/);
  refused(['down', '--node', 'real'], /--node does not apply to down/);
  refused(['--control-plane', 'kind'], /--control-plane is testbed .* or real .*not "kind"/);
  refused(['--control-plane'], /--control-plane/);
  refused(['--nodes', '2'], /--nodes does not apply to the demo/);
  refused(['--migrate', '--nodes', '2'], /--nodes does not apply to --migrate/);
  refused(['down', '--control-plane', 'real'], /--control-plane does not apply to down/);
  refused(['--libvirt-only', '--control-plane', 'real'], /--control-plane does not apply to --libvirt-only/);
  refused(['--images', '--network'], /choose one of --images, --network/);
  refused(['--images', 'up'], /choose one of --images, up/);
  refused(['up', 'down'], /one command at most/);
  refused(['start'], /unknown command "start"/);
  refused(['up', '--nodes', '0'], /--nodes wants a whole number of nodes, not "0"/);
  refused(['up', '--nodes', '1.5'], /not "1.5"/);
  refused(['--', '--feature-gates=HostDisk'], /flags after -- \(for podvirt-controller\) apply to up only/);
});
