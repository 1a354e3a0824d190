// Every command podvirtctl knows, with the flags it takes and its help text. parse-args
// validates against this table and usage renders it, so the two cannot drift apart.

export const OPERATION_COMMANDS = ['pause', 'unpause', 'freeze', 'unfreeze', 'soft-reboot', 'reset'] as const;
export const GUEST_COMMANDS = ['guestosinfo', 'userlist', 'fslist'] as const;

export type OperationCommand = (typeof OPERATION_COMMANDS)[number];
export type GuestCommand = (typeof GUEST_COMMANDS)[number];
export const VM_STATE_COMMANDS = ['start', 'stop', 'restart'] as const;
export type VmStateCommandName = (typeof VM_STATE_COMMANDS)[number];
export const VOLUME_COMMANDS = ['addvolume', 'removevolume'] as const;
export type VolumeCommandName = (typeof VOLUME_COMMANDS)[number];
export type CommandName = OperationCommand | GuestCommand | VmStateCommandName | VolumeCommandName | 'list' | 'version' | 'console' | 'vnc' | 'migrate' | 'migrate-cancel';

// Flags by their long name; FLAG_ALIASES maps the short spellings.
export type FlagName =
  | 'socket' | 'server' | 'ca' | 'cert' | 'key' | 'timeout' | 'output' | 'help'
  | 'namespace' | 'all-namespaces' | 'unfreeze-timeout' | 'takeover' | 'proxy-only' | 'port' | 'kubeconfig'
  | 'grace-period' | 'force' | 'node'
  | 'volume-name' | 'claim' | 'serial' | 'cache' | 'persist';

export interface FlagSpec {
  readonly takesValue: boolean;
  readonly placeholder: string;
  readonly help: string;
}

export const FLAGS: Readonly<Record<FlagName, FlagSpec>> = {
  'namespace': { takesValue: true, placeholder: 'NAMESPACE', help: 'namespace of the VMI (default "default")' },
  'all-namespaces': { takesValue: false, placeholder: '', help: 'list the VMIs of every namespace' },
  'unfreeze-timeout': {
    takesValue: true,
    placeholder: 'DURATION',
    help: 'thaw automatically after this long (5m, 300s or 300; 0 keeps the guest frozen) (default 5m)',
  },
  'takeover': { takesValue: false, placeholder: '', help: 'detach the client attached now and attach instead of being refused' },
  'proxy-only': { takesValue: false, placeholder: '', help: 'only run the proxy and print its port as {"port":N}; point any VNC viewer at it' },
  'port': { takesValue: true, placeholder: 'PORT', help: 'local port of the VNC proxy on 127.0.0.1 (default: a free port)' },
  'output': { takesValue: true, placeholder: 'FORMAT', help: 'json or yaml instead of the human output' },
  'timeout': { takesValue: true, placeholder: 'DURATION', help: 'deadline of the call, or of attaching for console and vnc (default 20s, 60s for freeze)' },
  'socket': {
    takesValue: true,
    placeholder: 'PATH',
    help: 'the handler\'s node API socket (default $PODVIRT_NODE_SOCKET, else /var/run/podvirt/node.sock)',
  },
  'server': { takesValue: true, placeholder: 'HOST:PORT', help: 'the handler\'s TLS port instead of the socket' },
  'ca': { takesValue: true, placeholder: 'FILE', help: 'CA bundle that signed the server certificate (with --server)' },
  'cert': { takesValue: true, placeholder: 'FILE', help: 'client certificate (with --server)' },
  'key': { takesValue: true, placeholder: 'FILE', help: 'client private key (with --server)' },
  'kubeconfig': {
    takesValue: true,
    placeholder: 'FILE',
    help: 'the cluster to talk to (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)',
  },
  'node': { takesValue: false, placeholder: '', help: 'talk to the handler\'s node API (the socket, or --server) instead of the API server; --socket and --server imply it' },
  'grace-period': { takesValue: true, placeholder: 'SECONDS', help: 'with --force: the VMI\'s termination grace period for this stop (default 0)' },
  'force': { takesValue: false, placeholder: '', help: 'stop now: shorten the VMI\'s termination grace period to --grace-period first' },
  'volume-name': { takesValue: true, placeholder: 'NAME', help: 'name of the volume (and of its disk) in the VMI' },
  'claim': { takesValue: true, placeholder: 'CLAIM', help: 'the PersistentVolumeClaim to hot-plug, in the VMI\'s namespace (default: --volume-name)' },
  'serial': { takesValue: true, placeholder: 'SERIAL', help: 'the disk\'s serial number, as the guest sees it' },
  'cache': { takesValue: true, placeholder: 'MODE', help: 'the disk\'s cache mode: none, writethrough or writeback' },
  'persist': { takesValue: false, placeholder: '', help: 'also change the template of the VirtualMachine of the same name, so the change outlives this VMI' },
  'help': { takesValue: false, placeholder: '', help: 'show help' },
};

export const FLAG_ALIASES: Readonly<Record<string, FlagName>> = {
  n: 'namespace',
  A: 'all-namespaces',
  o: 'output',
  h: 'help',
};

// Flags every command that talks to the node API accepts.
export const CONNECTION_FLAGS: readonly FlagName[] = ['socket', 'server', 'ca', 'cert', 'key', 'timeout', 'output', 'help'];

export interface CommandSpec {
  readonly summary: string;
  readonly args: string;
  readonly flags: readonly FlagName[];
  readonly examples: readonly string[];
}

const VMI_ARGS = '(NAMESPACE/NAME | [vmi] NAME [-n NAMESPACE])';
const VM_ARGS = '(NAMESPACE/NAME | [vm] NAME [-n NAMESPACE])';

// A VMI command the API server's subresources also serve: through it when the user has a
// kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config), through the node API with --node,
// --socket or --server, or without a kubeconfig.
function vmiCommand(summary: string, example: string, extra: readonly FlagName[] = []): CommandSpec {
  return {
    summary,
    args: VMI_ARGS,
    flags: ['namespace', ...extra, 'kubeconfig', 'node', ...CONNECTION_FLAGS],
    examples: [`podvirtctl ${example} vmi testvmi -n prod`, `podvirtctl ${example} prod/testvmi`],
  };
}

export const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  'pause': vmiCommand('Pause a VMI: its vCPUs stop, its memory stays', 'pause'),
  'unpause': vmiCommand('Resume a paused VMI', 'unpause'),
  'freeze': vmiCommand('Freeze the guest\'s filesystems through the guest agent', 'freeze', ['unfreeze-timeout']),
  'unfreeze': vmiCommand('Thaw the guest\'s filesystems', 'unfreeze'),
  'soft-reboot': vmiCommand('Reboot the guest OS through the guest agent or ACPI', 'soft-reboot'),
  'reset': vmiCommand('Hard-reset the VM, like pressing its reset button', 'reset'),
  'guestosinfo': vmiCommand('Show what the guest agent reports: OS, kernel, hostname, timezone', 'guestosinfo'),
  'userlist': vmiCommand('List the users logged in to the guest', 'userlist'),
  'fslist': vmiCommand('List the guest\'s mounted filesystems', 'fslist'),
  'console': {
    summary: 'Attach the terminal to a VMI\'s serial console (Ctrl+] detaches)',
    args: VMI_ARGS,
    flags: ['namespace', 'takeover', 'kubeconfig', 'node', 'socket', 'server', 'ca', 'cert', 'key', 'timeout', 'help'],
    examples: ['podvirtctl console vmi testvm', 'podvirtctl console prod/testvm --timeout 1m'],
  },
  'vnc': {
    summary: 'Serve a VMI\'s screen to a local VNC viewer',
    args: VMI_ARGS,
    flags: ['namespace', 'proxy-only', 'port', 'takeover', 'kubeconfig', 'node', 'socket', 'server', 'ca', 'cert', 'key', 'timeout', 'help'],
    examples: ['podvirtctl vnc vmi testvm --proxy-only', 'podvirtctl vnc vmi testvm --proxy-only --port 5901'],
  },
  'migrate': {
    summary: 'Live-migrate a running VMI to another node: creates a VirtualMachineInstanceMigration and prints its name; "migrate vm NAME" asks the VM\'s migrate subresource',
    args: '(NAMESPACE/NAME | [vmi|vm] NAME [-n NAMESPACE])',
    flags: ['namespace', 'kubeconfig', 'timeout', 'output', 'help'],
    examples: ['podvirtctl migrate vmi testvm', 'podvirtctl migrate vm testvm', 'kubectl get vmim -w'],
  },
  'migrate-cancel': {
    summary: 'Cancel the VMI\'s migration in progress: deletes its VirtualMachineInstanceMigration',
    args: VMI_ARGS,
    flags: ['namespace', 'kubeconfig', 'timeout', 'output', 'help'],
    examples: ['podvirtctl migrate-cancel vmi testvm'],
  },
  'start': {
    summary: 'Start a VirtualMachine: a start request, or runStrategy Always for a Halted VM (as KubeVirt\'s start subresource)',
    args: VM_ARGS,
    flags: ['namespace', 'kubeconfig', 'timeout', 'output', 'help'],
    examples: ['podvirtctl start vm testvm', 'kubectl get vm testvm -w'],
  },
  'stop': {
    summary: 'Stop a VirtualMachine: a stop request naming its VMI, or runStrategy Halted for an Always VM',
    args: VM_ARGS,
    flags: ['namespace', 'kubeconfig', 'grace-period', 'force', 'timeout', 'output', 'help'],
    examples: ['podvirtctl stop vm testvm', 'podvirtctl stop vm testvm --force --grace-period 0'],
  },
  'restart': {
    summary: 'Restart a VirtualMachine: its VMI is replaced by a new one from the template (same name, spec and disks)',
    args: VM_ARGS,
    flags: ['namespace', 'kubeconfig', 'timeout', 'output', 'help'],
    examples: ['podvirtctl restart vm testvm -n prod'],
  },
  'addvolume': {
    summary: 'Hot-plug a PersistentVolumeClaim into a running VMI as a scsi disk',
    args: VMI_ARGS,
    flags: ['namespace', 'volume-name', 'claim', 'serial', 'cache', 'persist', 'kubeconfig', 'timeout', 'output', 'help'],
    examples: ['podvirtctl addvolume vmi testvm --volume-name=data --claim=data-claim --serial=DATA1', 'kubectl get vmi testvm -o jsonpath=\'{.status.volumeStatus}\''],
  },
  'removevolume': {
    summary: 'Unplug a hot-plugged volume from a running VMI',
    args: VMI_ARGS,
    flags: ['namespace', 'volume-name', 'persist', 'kubeconfig', 'timeout', 'output', 'help'],
    examples: ['podvirtctl removevolume vmi testvm --volume-name=data'],
  },
  'list': {
    summary: 'List the VMIs on this node',
    args: '[vmis]',
    flags: ['namespace', 'all-namespaces', ...CONNECTION_FLAGS],
    examples: ['podvirtctl list -A', 'podvirtctl list -n prod -o json'],
  },
  'version': {
    summary: 'Print the podvirtctl version',
    args: '',
    flags: ['output', 'help'],
    examples: ['podvirtctl version'],
  },
};

export function isCommandName(word: string): word is CommandName {
  return Object.hasOwn(COMMANDS, word);
}
