// The demo's shell: runs the real kubectl and podvirtctl against a stack, echoing each command
// as a user would type it and its output below, indented. A failing command fails the demo
// with its stderr.
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { DemoOutput } from './boot-guest-demo.js';

export interface DemoShellOptions {
  readonly out: DemoOutput;
  /** The environment commands inherit (the host's). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Node binary and repository root: podvirtctl runs from the build. */
  readonly node: string;
  readonly repoRoot: string;
  readonly kubeconfig: string;
  readonly nodeApiSocket: string;
  /** The kubectl binary: the one on PATH unless given (the real control plane's own v1.34, within its version skew). */
  readonly kubectl?: string;
}

export interface ShowOptions {
  /** Show only the last this many lines. */
  readonly maxLines?: number;
  /** Cut longer lines here. */
  readonly width?: number;
  /** Show JSON log lines condensed: time, component (/subcomponent) and message. */
  readonly condenseJson?: boolean;
  /** Lines (after condensing) left out. */
  readonly skip?: RegExp;
}

/** The stack's own kubectl for DemoShellOptions, when it has one (the real control plane's). */
export function kubectlOf(stack: { readonly testbed: { readonly controlPlane: { readonly binaries: { readonly kubectl: string } } | undefined } }): { kubectl?: string } {
  const bin = stack.testbed.controlPlane?.binaries.kubectl;
  return bin === undefined ? {} : { kubectl: bin };
}

export class DemoCommandError extends Error {
  readonly code = 'DEMO_COMMAND_FAILED';
}

const COMMAND_TIMEOUT_MS = 60_000;
const RETYPE_AFTER_MS = 10_000;

export class DemoShell {
  readonly #o: DemoShellOptions;

  constructor(options: DemoShellOptions) {
    this.#o = options;
  }

  /** `kubectl ARGS` with KUBECONFIG pointing at the stack. */
  kubectl(args: readonly string[], show: ShowOptions = {}): Promise<string> {
    return this.#run(`kubectl ${args.join(' ')}`, this.#o.kubectl ?? 'kubectl', args, { KUBECONFIG: this.#o.kubeconfig }, show);
  }

  /** Where podvirtctl's VMI operations go, as the demo says it. */
  readonly vmiOpsRoute = "the API server (podvirt-api's subresources)";

  /** `podvirtctl ARGS` with KUBECONFIG (pause, console and the like go through the API server) and PODVIRT_NODE_SOCKET pointing at the stack's handler (list). */
  podvirtctl(args: readonly string[], show: ShowOptions = {}): Promise<string> {
    const bin = join(this.#o.repoRoot, 'packages/ctl/bin/podvirtctl.js');
    const env = { PODVIRT_NODE_SOCKET: this.#o.nodeApiSocket, KUBECONFIG: this.#o.kubeconfig };
    return this.#run(`podvirtctl ${args.join(' ')}`, this.#o.node, [bin, ...args], env, show);
  }

  /** Any other command the demo shows (`shown` is how it reads, e.g. `crictl`; `file` what runs). */
  command(shown: string, file: string, args: readonly string[], show: ShowOptions = {}): Promise<string> {
    return this.#run(`${shown} ${args.join(' ')}`, file, args, {}, show);
  }

  /**
   * `podvirtctl console vmi NAME`, typing `command` once attached and Ctrl+] once the output
   * matches `answer`, as a person would; shows what the console printed.
   */
  async console(vmi: string, command: string, answer: RegExp): Promise<string> {
    const out = this.#o.out;
    const args = ['console', 'vmi', vmi];
    out.detail(`$ podvirtctl ${args.join(' ')}      # then: ${command} ⏎  and Ctrl+] to detach`);
    const bin = join(this.#o.repoRoot, 'packages/ctl/bin/podvirtctl.js');
    const child = spawn(this.#o.node, [bin, ...args], { env: { ...this.#o.env, PODVIRT_NODE_SOCKET: this.#o.nodeApiSocket, KUBECONFIG: this.#o.kubeconfig } });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGTERM'), COMMAND_TIMEOUT_MS);
    // A serial line may lose what is typed while the guest's side is not yet reading it (just
    // after a migration, say): as a person would, clear the line (Ctrl+U) and type again while
    // no answer came.
    let retype: NodeJS.Timeout | undefined;
    let answered = false;
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      if (!answered && answer.test(stdout)) {
        answered = true;
        clearInterval(retype);
        child.stdin.write('\x1d');
      }
    });
    child.stderr.on('data', (b: Buffer) => {
      const first = stderr === '';
      stderr += b.toString();
      if (!first) return;
      child.stdin.write(`${command}\r`);
      retype = setInterval(() => child.stdin.write(`\x15${command}\r`), RETYPE_AFTER_MS);
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    clearTimeout(timer);
    clearInterval(retype);
    const said = stderr.split('\n').filter((l) => l.trim() !== '');
    // The guest's shell asks the terminal for its cursor position (ESC [6n): not worth showing.
    const shown = [said[0] ?? '', ...stdout.replace(ANSI_SEQUENCE, '').split(/\r?\n/), said.at(-1) ?? ''];
    for (const line of shown.filter((l) => l.trim() !== '')) out.detail(`  ${line}`);
    if (code !== 0) {
      const seen = stdout.replace(ANSI_SEQUENCE, '').slice(-400);
      throw new DemoCommandError(`podvirtctl console failed (exit ${String(code)}): ${stderr.trim()}\nthe console showed (last 400 characters): ${JSON.stringify(seen)}`);
    }
    return stdout;
  }

  async #run(shown: string, file: string, args: readonly string[], env: Record<string, string>, show: ShowOptions): Promise<string> {
    const out = this.#o.out;
    out.detail(`$ ${shown}`);
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(file, [...args], { env: { ...this.#o.env, ...env }, timeout: COMMAND_TIMEOUT_MS }, (err, text, stderr) => {
        if (err === null) resolve(text);
        else reject(new DemoCommandError(`${shown} failed: ${stderr.trim() || err.message}`, { cause: err }));
      });
    });
    const lines = stdout.split('\n').filter((l) => l.trim() !== '').map((l) => (show.condenseJson === true ? condense(l) : l))
      .filter((l) => show.skip === undefined || !show.skip.test(l));
    const width = show.width ?? 150;
    for (const line of lines.slice(-(show.maxLines ?? 40))) out.detail(`  ${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
    return stdout;
  }
}

const ANSI_SEQUENCE = new RegExp(`${String.fromCharCode(0x1b)}\\[[0-9;?]*[A-Za-z]`, 'g');

/** `07:13:59.487 virt-launcher/qemu  message` for a pino JSON line; other lines unchanged. */
function condense(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof entry['time'] === 'string' ? entry['time'].slice(11, 23) : '';
  const who = [entry['component'], entry['subcomponent']].filter((x) => typeof x === 'string').join('/');
  return `${time} ${who.padEnd(24)} ${String(entry['msg'] ?? '')}`;
}
