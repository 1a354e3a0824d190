// A Dockerfile read as the ship-images suite checks it: instructions with their continuation
// lines joined, COPY sources, the files it links into /usr/bin, ENTRYPOINT and ENV.
import { readFile } from 'node:fs/promises';

export interface Instruction {
  readonly op: string;
  readonly text: string;
}

export interface CopyInstruction {
  /** `--from=<name>` when the sources come from another stage or build context. */
  readonly from: string | undefined;
  readonly sources: readonly string[];
  readonly dest: string;
}

export interface Dockerfile {
  readonly instructions: readonly Instruction[];
  readonly from: readonly string[];
  readonly copies: readonly CopyInstruction[];
  /** /usr/bin/<name> → the file `ln -s` points it at. */
  readonly links: ReadonlyMap<string, string>;
  readonly entrypoint: readonly string[] | undefined;
  readonly env: ReadonlyMap<string, string>;
  /** Every word of every RUN, for package lists. */
  readonly runText: string;
}

export async function readDockerfile(path: string): Promise<Dockerfile> {
  const lines = (await readFile(path, 'utf8')).split('\n').filter((l) => !/^\s*#/.test(l));
  const instructions: Instruction[] = [];
  let current = '';
  for (const line of lines) {
    current += current === '' ? line.trim() : ` ${line.trim()}`;
    if (current.endsWith('\\')) {
      current = current.slice(0, -1).trim();
      continue;
    }
    if (current !== '') {
      const [op = '', ...rest] = current.split(/\s+/);
      instructions.push({ op: op.toUpperCase(), text: rest.join(' ') });
    }
    current = '';
  }
  const of = (op: string): Instruction[] => instructions.filter((i) => i.op === op);
  const copies = of('COPY').map((i): CopyInstruction => {
    const words = i.text.split(/\s+/);
    const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
    const paths = words.filter((w) => !w.startsWith('--'));
    return { from, sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
  });
  const runText = of('RUN').map((i) => i.text).join(' ');
  const links = new Map<string, string>();
  for (const m of runText.matchAll(/ln -s (\S+) (\/usr\/bin\/\S+)/g)) links.set(m[2] ?? '', m[1] ?? '');
  const entry = of('ENTRYPOINT').at(-1);
  const args = new Map<string, string>();
  for (const i of of('ARG')) {
    const [key = '', ...value] = i.text.split('=');
    if (value.length > 0) args.set(key, value.join('='));
  }
  const env = new Map<string, string>();
  for (const i of of('ENV')) {
    const [key = '', ...value] = i.text.split('=');
    env.set(key, value.join('='));
  }
  return {
    instructions,
    // A FROM naming a build argument (`FROM ${BASE}`) is read with the argument's default.
    from: of('FROM').map((i) => (i.text.split(/\s+/)[0] ?? '').replace(/\$\{(\w+)\}/g, (m, name: string) => args.get(name) ?? m)),
    copies,
    links,
    entrypoint: entry === undefined ? undefined : (JSON.parse(entry.text) as string[]),
    env,
    runText,
  };
}
