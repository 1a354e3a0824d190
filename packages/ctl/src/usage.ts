// Help and usage text, rendered from the command table.
import { COMMANDS, FLAG_ALIASES, FLAGS, type CommandName, type FlagName } from './command-table.js';

const INTRO = 'podvirtctl acts on the VMIs of this node through the node API of podvirt-handler.';
const EXIT_CODES = 'Exit codes: 0 done, 1 the node API refused or failed, 2 usage error, 3 cannot connect, 130 interrupted.';

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
    EXIT_CODES,
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
