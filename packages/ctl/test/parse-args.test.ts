// parse-args as a table: argv (+ PODVIRT_NODE_SOCKET) → invocation, or the usage error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseArgs, type Invocation } from '../src/parse-args.js';
import { UsageError } from '../src/usage-error.js';

const DEFAULT_CALL = { connection: { kind: 'unix', path: '/var/run/podvirt/node.sock' }, output: 'human', timeoutMs: 20_000 } as const;
/** A VMI command the API server also serves: through it when runCli finds a kubeconfig. */
const VMI_CALL = { ...DEFAULT_CALL, api: { kubeconfig: undefined } } as const;
const db = { namespace: 'prod', name: 'db' };

const ok: [string, string[], Invocation, string?][] = [
  ['no arguments → overview help', [], { kind: 'help', command: undefined }],
  ['--help', ['--help'], { kind: 'help', command: undefined }],
  ['help COMMAND', ['help', 'freeze'], { kind: 'help', command: 'freeze' }],
  ['COMMAND -h', ['pause', '-h'], { kind: 'help', command: 'pause' }],
  ['ns/name', ['pause', 'prod/db'], { kind: 'operation', command: 'pause', target: db, call: VMI_CALL }],
  ['name -n ns', ['unpause', 'db', '-n', 'prod'], { kind: 'operation', command: 'unpause', target: db, call: VMI_CALL }],
  ['vmi kind word', ['soft-reboot', 'vmi', 'db', '--namespace=prod'], { kind: 'operation', command: 'soft-reboot', target: db, call: VMI_CALL }],
  ['flags before the command', ['-nprod', 'reset', 'db'], { kind: 'operation', command: 'reset', target: db, call: VMI_CALL }],
  ['-n equal to the ns/ part', ['unfreeze', 'prod/db', '-n', 'prod'], { kind: 'operation', command: 'unfreeze', target: db, call: VMI_CALL }],
  ['default namespace', ['pause', 'vm1'], { kind: 'operation', command: 'pause', target: { namespace: 'default', name: 'vm1' }, call: VMI_CALL }],
  ['a VMI named vmi', ['pause', 'vmi'], { kind: 'operation', command: 'pause', target: { namespace: 'default', name: 'vmi' }, call: VMI_CALL }],
  ['freeze defaults: 5m thaw, 60s deadline', ['freeze', 'prod/db'],
    { kind: 'freeze', target: db, unfreezeTimeoutSeconds: 300, call: { ...VMI_CALL, timeoutMs: 60_000 } }],
  ['--unfreeze-timeout 5m', ['freeze', 'prod/db', '--unfreeze-timeout', '5m'],
    { kind: 'freeze', target: db, unfreezeTimeoutSeconds: 300, call: { ...VMI_CALL, timeoutMs: 60_000 } }],
  ['--unfreeze-timeout=90s', ['freeze', 'prod/db', '--unfreeze-timeout=90s', '--timeout', '2m'],
    { kind: 'freeze', target: db, unfreezeTimeoutSeconds: 90, call: { ...VMI_CALL, timeoutMs: 120_000 } }],
  ['--unfreeze-timeout 0', ['freeze', 'prod/db', '--unfreeze-timeout', '0'],
    { kind: 'freeze', target: db, unfreezeTimeoutSeconds: 0, call: { ...VMI_CALL, timeoutMs: 60_000 } }],
  ['guest commands', ['guestosinfo', 'prod/db', '-o', 'json'],
    { kind: 'guest', command: 'guestosinfo', target: db, call: { ...VMI_CALL, output: 'json' } }],
  ['-oyaml', ['fslist', 'prod/db', '-oyaml'], { kind: 'guest', command: 'fslist', target: db, call: { ...VMI_CALL, output: 'yaml' } }],
  ['list defaults to the default namespace', ['list'], { kind: 'list', namespace: 'default', call: DEFAULT_CALL }],
  ['list -A', ['list', 'vmis', '-A'], { kind: 'list', namespace: '', call: DEFAULT_CALL }],
  ['list -n', ['list', '-n', 'prod'], { kind: 'list', namespace: 'prod', call: DEFAULT_CALL }],
  ['--timeout in bare seconds', ['userlist', 'prod/db', '--timeout', '5'],
    { kind: 'guest', command: 'userlist', target: db, call: { ...VMI_CALL, timeoutMs: 5000 } }],
  ['PODVIRT_NODE_SOCKET', ['list'], { kind: 'list', namespace: 'default', call: { ...DEFAULT_CALL, connection: { kind: 'unix', path: '/env.sock' } } }, '/env.sock'],
  ['--socket beats the environment', ['list', '--socket', '/flag.sock'],
    { kind: 'list', namespace: 'default', call: { ...DEFAULT_CALL, connection: { kind: 'unix', path: '/flag.sock' } } }, '/env.sock'],
  ['--server with mutual TLS', ['list', '--server', 'node-a:8186', '--ca', 'ca.pem', '--cert', 'c.pem', '--key', 'k.pem'],
    { kind: 'list', namespace: 'default', call: { ...DEFAULT_CALL, connection: { kind: 'tls', address: 'node-a:8186', ca: 'ca.pem', cert: 'c.pem', key: 'k.pem' } } }],
  ['--server without --ca uses the system roots', ['list', '--server', '[::1]:8186', '--cert', 'c.pem', '--key', 'k.pem'],
    { kind: 'list', namespace: 'default', call: { ...DEFAULT_CALL, connection: { kind: 'tls', address: '[::1]:8186', ca: undefined, cert: 'c.pem', key: 'k.pem' } } }],
  ['-- ends the flags', ['pause', '--', '-odd'], { kind: 'operation', command: 'pause', target: { namespace: 'default', name: '-odd' }, call: VMI_CALL }],
  ['version', ['version', '-o', 'json'], { kind: 'version', output: 'json' }],
  ['--kubeconfig: through the API server with that file', ['pause', 'prod/db', '--kubeconfig', '/k.yaml'], { kind: 'operation', command: 'pause', target: db, call: { ...DEFAULT_CALL, api: { kubeconfig: '/k.yaml' } } }],
  ['--node: the node API only', ['pause', 'prod/db', '--node'], { kind: 'operation', command: 'pause', target: db, call: DEFAULT_CALL }],
  ['--socket: the node API only', ['guestosinfo', 'prod/db', '--socket', '/flag.sock'], { kind: 'guest', command: 'guestosinfo', target: db, call: { ...DEFAULT_CALL, connection: { kind: 'unix', path: '/flag.sock' } } }],
];

for (const [name, argv, expected, socket] of ok) {
  test(`parse-args: ${name}`, () => {
    assert.deepEqual(parseArgs(argv, { socket }), expected);
  });
}

// argv → [the message, the command whose usage is printed with it]
const bad: [string, string[], RegExp, string | undefined][] = [
  ['unknown command', ['shutdown', 'db'], /^unknown command "shutdown"$/, undefined],
  ['help for an unknown command', ['help', 'shutdown'], /^unknown command "shutdown"$/, undefined],
  ['unknown flag', ['pause', 'db', '--forcefully'], /^unknown flag: --forcefully$/, 'pause'],
  ['--kubeconfig with --socket', ['pause', 'db', '--socket', '/s', '--kubeconfig', '/k'], /^--kubeconfig goes through the API server, --socket to the node: give one or the other$/, 'pause'],
  ['unknown shorthand', ['pause', 'db', '-x'], /^unknown shorthand flag: 'x' in -x$/, 'pause'],
  ['flag of another command', ['pause', 'db', '--unfreeze-timeout', '1m'], /^"pause" does not take --unfreeze-timeout$/, 'pause'],
  ['-A outside list', ['pause', 'db', '-A'], /does not take --all-namespaces/, 'pause'],
  ['missing value', ['pause', 'db', '-n'], /^flag --namespace needs a value: NAMESPACE$/, 'pause'],
  ['value on a boolean', ['list', '--all-namespaces=yes'], /takes no value/, 'list'],
  ['missing target', ['pause'], /^missing VMI: give NAMESPACE\/NAME, or NAME with -n NAMESPACE$/, 'pause'],
  ['missing target with -n', ['pause', '-n', 'x'], /^missing VMI/, 'pause'],
  ['two targets', ['pause', 'a', 'b'], /^one VMI at a time/, 'pause'],
  ['vm kind word', ['pause', 'vm', 'db'], /podvirt acts on VMIs: use "podvirtctl pause vmi NAME"/, 'pause'],
  ['too many slashes', ['pause', 'a/b/c'], /^invalid VMI "a\/b\/c": want NAMESPACE\/NAME or NAME$/, 'pause'],
  ['empty name', ['pause', 'prod/'], /^invalid VMI "prod\/"/, 'pause'],
  ['namespace twice', ['pause', 'prod/db', '-n', 'dev'], /^namespace given twice: "prod\/db" and -n dev$/, 'pause'],
  ['bad duration', ['freeze', 'db', '--unfreeze-timeout', 'soon'], /^invalid --unfreeze-timeout "soon": want whole seconds such as 5m, 300s or 300/, 'freeze'],
  ['fractional thaw', ['freeze', 'db', '--unfreeze-timeout', '1.5s'], /^invalid --unfreeze-timeout "1.5s"/, 'freeze'],
  ['negative thaw', ['freeze', 'db', '--unfreeze-timeout=-1'], /^invalid --unfreeze-timeout "-1"/, 'freeze'],
  ['bad timeout', ['pause', 'db', '--timeout', '0'], /^invalid --timeout "0": want a positive duration such as 20s, 2m or 90 \(seconds\)$/, 'pause'],
  ['bad output', ['list', '-o', 'wide'], /^invalid --output "wide": accepted are json and yaml$/, 'list'],
  ['-n with -A', ['list', '-A', '-n', 'x'], /^-n and -A exclude each other$/, 'list'],
  ['list with a name', ['list', 'db'], /^"list" takes no names, got "db"$/, 'list'],
  ['--socket with --server', ['list', '--socket', '/s', '--server', 'h:1', '--cert', 'c', '--key', 'k'], /exclude each other/, 'list'],
  ['--server without a client certificate', ['list', '--server', 'h:1'], /^--server needs --cert and --key/, 'list'],
  ['--server without a port', ['list', '--server', 'node-a', '--cert', 'c', '--key', 'k'], /^invalid --server "node-a": want HOST:PORT$/, 'list'],
  ['--cert without --server', ['list', '--cert', 'c'], /^--cert goes with --server HOST:PORT$/, 'list'],
  ['version with arguments', ['version', 'now'], /^"version" takes no arguments/, 'version'],
];

for (const [name, argv, message, command] of bad) {
  test(`parse-args rejects: ${name}`, () => {
    assert.throws(
      () => parseArgs(argv, { socket: undefined }),
      (err: unknown) => {
        assert.ok(err instanceof UsageError);
        assert.equal(err.code, 'CTL_ERR_USAGE');
        assert.match(err.message, message);
        assert.equal(err.command, command);
        return true;
      },
    );
  });
}
