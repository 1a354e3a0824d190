// Help and usage text, rendered from the command table.
import { COMMANDS, FLAG_ALIASES, FLAGS, type CommandName, type FlagName } from './command-table.js';

const INTRO = 'podvirtctl acts on the VMIs of this node through the node API of podvirt-handler.';
const EXIT_CODES = 'Exit codes: 0 done, 1 the node API refused or failed, 2 usage error, 3 cannot connect, 130 interrupted.';
const STREAM_EXIT_CODES = 'console and vnc also: 4 no such VMI, 5 the VMI cannot be attached (not running, on another node, another client attached), 6 the stream ended from the far side (the VM stopped, the handler went away, another client took over).';

const CONSOLE_NOTE = [
  'The terminal is put in raw mode (every key goes to the guest, Ctrl+C included) and restored on',
  'exit. Ctrl+] detaches. One client per VMI: a second is refused unless it passes --takeover.',
  'A serial line has no window size: after resizing the terminal, run `stty rows R cols C` in the guest.',
].join('\n');

// The full help: `podvirtctl --help` or `podvirtctl COMMAND --help`.
export function formatHelp(command: CommandName | undefined): string {
  return command === undefined ? overview() : commandHelp(command);
}

// The two lines printed under a usage error.
export function formatShortUsage(command: CommandName | undefined): string {
  if (command === undefined) return 'Usage: podvirtctl COMMAND [flags]\nRun "podvirtctl --help" for the commands.\n';
  return `Usage: ${synopsis(command)}\nRun "podvirtctl ${command} --help" for more.\n`;
}

function overview(): string {
  const names = Object.keys(COMMANDS) as CommandName[];
  const width = Math.max(...names.map((name) => name.length)) + 3;
  const commands = names.map((name) => `  ${name.padEnd(width)}${COMMANDS[name].summary}`);
  return [
    INTRO,
    '',
    'Usage:',
    '  podvirtctl COMMAND [flags]',
    '',
    'Commands:',
    ...commands,
    '',
    'Connection flags (every command but version):',
    ...flagLines(['socket', 'server', 'ca', 'cert', 'key', 'timeout', 'output']),
    '',
    'Run "podvirtctl COMMAND --help" for a command\'s own flags.',
    EXIT_CODES,
    STREAM_EXIT_CODES,
    '',
  ].join('\n');
}

function commandHelp(command: CommandName): string {
  const spec = COMMANDS[command];
  return [
    spec.summary,
    '',
    'Usage:',
    `  ${synopsis(command)}`,
    '',
    'Examples:',
    ...spec.examples.map((example) => `  ${example}`),
    '',
    'Flags:',
    ...flagLines(spec.flags),
    '',
    ...(command === 'console' ? [CONSOLE_NOTE, ''] : []),
    EXIT_CODES,
    ...(command === 'console' || command === 'vnc' ? [STREAM_EXIT_CODES] : []),
    '',
  ].join('\n');
}

function synopsis(command: CommandName): string {
  const args = COMMANDS[command].args;
  return `podvirtctl ${command}${args === '' ? '' : ` ${args}`} [flags]`;
}

function flagLines(names: readonly FlagName[]): string[] {
  const heads = names.map((name) => {
    const alias = Object.keys(FLAG_ALIASES).find((letter) => FLAG_ALIASES[letter] === name);
    const placeholder = FLAGS[name].placeholder;
    return `${alias === undefined ? '    ' : `-${alias}, `}--${name}${placeholder === '' ? '' : ` ${placeholder}`}`;
  });
  const width = Math.max(...heads.map((head) => head.length)) + 3;
  return names.map((name, i) => `  ${(heads[i] ?? '').padEnd(width)}${FLAGS[name].help}`);
}
