// podvirt/podvirt as scripts/images builds it (production dependencies only): each of its four
// programs starts from the image and gets as far as reading its command line, so every module
// it imports is there; and no dev tool came along. Needs the images (scripts/images).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCommand } from '../testbed/sandbox/run-command.js';

const IMAGE = 'localhost/podvirt/podvirt:0.1.0';

function inImage(argv: readonly string[], entrypoint = argv[0] ?? ''): ReturnType<typeof runCommand> {
  return runCommand(['podman', 'run', '--rm', '--network', 'none', '--entrypoint', entrypoint, IMAGE, ...argv.slice(1)], { timeoutMs: 60_000 });
}

describe('the podvirt/podvirt image', () => {
  test('handler, controller, podvirt-api and podvirtctl load every module they import and read their flags', async () => {
    const handler = await inImage(['/usr/bin/podvirt-handler', '--no-such-flag']);
    assert.notEqual(handler.code, 0);
    assert.match(handler.stderr, /^usage: podvirt-handler /m, handler.stderr);
    const controller = await inImage(['/usr/bin/podvirt-controller', '--no-such-flag']);
    assert.notEqual(controller.code, 0);
    assert.match(controller.stdout, /"code":"CONTROLLER_ERR_BAD_FLAG"/, controller.stdout + controller.stderr);
    const api = await inImage(['/usr/bin/podvirt-api', '--no-such-flag']);
    assert.notEqual(api.code, 0);
    assert.match(api.stdout, /"code":"PODVIRT_API_ERR_BAD_FLAG"/, api.stdout + api.stderr);
    const ctl = await inImage(['/usr/bin/podvirtctl', '--help']);
    assert.equal(ctl.code, 0, ctl.stderr);
    assert.match(ctl.stdout, /^podvirtctl acts on the VMIs of this node/m);
  });

  test('production dependencies only: no TypeScript, ESLint or esbuild in its node_modules', async () => {
    const listed = await inImage(['/bin/ls', '/opt/podvirt/node_modules/.pnpm']);
    assert.equal(listed.code, 0, listed.stderr);
    const packages = listed.stdout.split('\n').filter((l) => l !== '');
    assert.ok(packages.some((p) => p.startsWith('@grpc+grpc-js@')), packages.join(' '));
    assert.deepEqual(packages.filter((p) => /^(typescript|eslint|esbuild|@typescript-eslint|node-pty)@/.test(p)), []);
  });
});
