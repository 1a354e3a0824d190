// The human renderers as tables: input → exact text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cmd, node } from '@podvirt/proto';
import { ConnectError } from '../src/connect-error.js';
import { NodeApiError } from '../src/node-api-error.js';
import { formatBytes } from '../src/render/bytes.js';
import { renderFailure, type FailureContext } from '../src/render/failure.js';
import { renderFilesystemList } from '../src/render/filesystem-list.js';
import { renderGuestInfo } from '../src/render/guest-info.js';
import { renderOperation } from '../src/render/operation.js';
import { renderStructured } from '../src/render/structured.js';
import { renderTable } from '../src/render/table.js';
import { renderUserList } from '../src/render/user-list.js';
import { renderEmptyList, renderVmiList } from '../src/render/vmi-list.js';
import { UsageError } from '../src/usage-error.js';

const cases: [string, () => string, string][] = [
  ['table pads all but the last column', () => renderTable(['A', 'LONG'], [['xyz', '1'], ['', 'x']]), 'A     LONG\nxyz   1\n      x\n'],
  ['vmi list, sorted, with <none> and state/reason', () =>
    renderVmiList([
      node.VmiSummary.fromPartial({ namespace: 'prod', name: 'db', phase: 'Running', nodeName: 'node-a', domainState: 'Paused',
        domainReason: 'User', paused: true, agentConnected: true, fsFreezeStatus: 'frozen' }),
      node.VmiSummary.fromPartial({ namespace: 'default', name: 'new', phase: 'Scheduled' }),
    ]),
    'NAMESPACE   NAME   PHASE       NODE     DOMAIN        AGENT   FROZEN\n' +
    'default     new    Scheduled   <none>   <none>        no      no\n' +
    'prod        db     Running     node-a   Paused/User   yes     yes\n'],
  ['empty list in a namespace', () => renderEmptyList('prod'), 'No resources found in prod namespace.\n'],
  ['empty list everywhere', () => renderEmptyList(''), 'No resources found\n'],
  ['operation', () => renderOperation('soft-reboot', { namespace: 'ns', name: 'vm' }), 'VMI ns/vm was soft rebooted\n'],
  ['freeze with a thaw', () => renderOperation('freeze', { namespace: 'ns', name: 'vm' }, 300), 'VMI ns/vm was frozen; it thaws by itself in 5m\n'],
  ['freeze without a thaw', () => renderOperation('freeze', { namespace: 'ns', name: 'vm' }, 0),
    'VMI ns/vm was frozen; it stays frozen until "podvirtctl unfreeze ns/vm"\n'],
  ['user list', () => renderUserList(cmd.GuestUserList.fromPartial({ users: [{ userName: 'root', loginTime: 1_700_000_000.75 },
    { userName: 'ann', domain: 'CORP', loginTime: 0 }] })),
    'USER   DOMAIN   LOGIN TIME\nroot   <none>   2023-11-14T22:13:20Z\nann    CORP     <unknown>\n'],
  ['no users', () => renderUserList(cmd.GuestUserList.fromPartial({})), 'No users are logged in to the guest.\n'],
  ['filesystem list', () => renderFilesystemList(cmd.GuestFilesystemList.fromPartial({ filesystems: [
    { diskName: 'vda1', mountPoint: '/', fileSystemType: 'ext4', usedBytes: 1_610_612_736, totalBytes: 4_294_967_296 },
    { mountPoint: '/run', fileSystemType: 'tmpfs', usedBytes: 0, totalBytes: 0 }] })),
    'DISK     MOUNTPOINT   TYPE    USED    TOTAL   USE%\nvda1     /            ext4    1.5Gi   4Gi     38%\n<none>   /run         tmpfs   0B      0B      -\n'],
  ['guest info', () => renderGuestInfo(cmd.GuestInfo.fromPartial({
    guestAgentVersion: '8.1.3', hostname: 'db-0', timezone: 'UTC, 0',
    os: { prettyName: 'Debian GNU/Linux 12 (bookworm)', id: 'debian', versionId: '12', kernelRelease: '6.1.0-26', kernelVersion: '#1 SMP', machine: 'x86_64' },
    supportedCommands: [{ name: 'a', enabled: true }, { name: 'b', enabled: false }],
    filesystems: [{ mountPoint: '/' }], fsFreezeStatus: 'frozen' })),
    'Hostname:        db-0\nOS:              Debian GNU/Linux 12 (bookworm)\nOS ID:           debian 12\nKernel:          6.1.0-26 #1 SMP\n' +
    'Machine:         x86_64\nTimezone:        UTC, 0\nAgent version:   8.1.3\nAgent commands:  1 enabled of 2\n' +
    'Filesystems:     1 mounted, frozen\nUsers:           0 logged in\n'],
  ['guest info without an OS', () => renderGuestInfo(cmd.GuestInfo.fromPartial({})).split('\n')[1] ?? '', 'OS:              <none>'],
  ['json', () => renderStructured({ uid: 'u', nested: { fsFreezeStatus: '' } }, 'json'), '{\n  "uid": "u",\n  "nested": {\n    "fsFreezeStatus": ""\n  }\n}\n'],
  ['yaml', () => renderStructured({ vmis: [{ name: 'db', paused: true }] }, 'yaml'), 'vmis:\n  - name: db\n    paused: true\n'],
];
for (const [name, render, expected] of cases) {
  test(`render: ${name}`, () => assert.equal(render(), expected));
}

const bytes: [number, string][] = [[0, '0B'], [1023, '1023B'], [1536, '1.5Ki'], [10_737_418_240, '10Gi'], [120 * 1024 ** 2, '120Mi'], [1024 ** 4 * 2.25, '2.3Ti']];
for (const [value, text] of bytes) {
  test(`formatBytes(${value}) = ${text}`, () => assert.equal(formatBytes(value), text));
}

const unix: FailureContext = { command: 'pause', connection: { kind: 'unix', path: '/s.sock' }, timeoutMs: 20_000, interrupted: false };
const failures: [string, unknown, FailureContext, number, string | RegExp][] = [
  ['NOT_FOUND', new NodeApiError('NOT_FOUND', 'VMI a/b not found'), unix, 1,
    'error: VMI a/b not found\nhint: check the name with "podvirtctl list -A"; only VMIs on this node are known here\n'],
  ['FAILED_PRECONDITION has no hint', new NodeApiError('FAILED_PRECONDITION', 'VMI a/b is paused: unpause it first'), unix, 1,
    'error: VMI a/b is paused: unpause it first\n'],
  ['UNAVAILABLE names the socket', new NodeApiError('UNAVAILABLE', 'launcher does not answer'), unix, 1,
    /hint: is the handler running on this node, and the VMI's launcher pod\? node API: socket \/s\.sock\n$/],
  ['DEADLINE_EXCEEDED names the timeout', new NodeApiError('DEADLINE_EXCEEDED', 'Deadline exceeded'), unix, 1,
    /hint: no answer within 20s: .* allow longer with --timeout\n$/],
  ['socket missing', new ConnectError('socket-missing', '/s.sock', 'the node API socket /s.sock does not exist'), unix, 3,
    /^error: the node API socket \/s\.sock does not exist\nhint: is podvirt-handler running on this node\?/],
  ['permission denied', new ConnectError('permission-denied', '/s.sock', 'permission denied on the node API socket /s.sock'), unix, 3,
    /hint: the node API socket is root-only: run podvirtctl as root/],
  ['TLS port unreachable', new ConnectError('unreachable', 'h:1', 'cannot reach'),
    { ...unix, connection: { kind: 'tls', address: 'h:1', ca: undefined, cert: 'c', key: 'k' } }, 3, /hint: check --server/],
  ['usage', new UsageError('unknown flag: --x', 'list'), unix, 2,
    'error: unknown flag: --x\nUsage: podvirtctl list [vmis] [flags]\nRun "podvirtctl list --help" for more.\n'],
  ['interrupted wins', new NodeApiError('CANCELLED', 'Cancelled on client'), { ...unix, interrupted: true }, 130, /^error: interrupted/],
  ['anything else', new Error('boom'), unix, 1, 'error: boom\n'],
];
for (const [name, err, context, exitCode, stderr] of failures) {
  test(`renderFailure: ${name}`, () => {
    const failure = renderFailure(err, context);
    assert.equal(failure.exitCode, exitCode);
    if (typeof stderr === 'string') assert.equal(failure.stderr, stderr);
    else assert.match(failure.stderr, stderr);
  });
}
