// The one parser for command lines in Go's flag grammar, which KubeVirt's launcher pod speaks and
// so the launcher and its PID-1 monitor take: one or two leading dashes (`-name`, `--name`), a
// value as `--flag value` or `--flag=value`, a boolean as `--flag` or `--flag=false` (never
// `--flag false`), and nothing interpreted after `--`. node:util's parseArgs (which the handler,
// the controller and podvirtctl use) cannot take this: it reads `-name` as four short flags and
// refuses `--flag=false`. Durations use the one duration grammar. Imports only that grammar, so
// the monitor loads it without the VMI API (`@podvirt/api/go-flags`).
import { DurationError, MAX_TIMER_MS, parseDuration } from './duration.js';

export type GoFlagType = 'string' | 'boolean' | 'duration' | 'integer';

/** The bounds of an integer flag, both inclusive; 0 to Number.MAX_SAFE_INTEGER when unset. */
export interface IntegerBounds {
  readonly min?: number;
  readonly max?: number;
}

export type GoFlagSpec = { readonly type: 'string' | 'boolean' | 'duration' } | ({ readonly type: 'integer' } & IntegerBounds);

export interface GoFlagOptions {
  readonly [flag: string]: GoFlagSpec;
}

type ValueOf<T extends GoFlagType> = T extends 'boolean' ? boolean : T extends 'duration' | 'integer' ? number : string;

export type GoFlagValues<O extends GoFlagOptions> = { -readonly [K in keyof O]?: ValueOf<O[K]['type']> };

export interface GoFlagConfig<O extends GoFlagOptions> {
  readonly options: O;
  /**
   * What an argument that is not one of `options` does: 'error' refuses it, naming it; 'keep'
   * passes it (and everything after `--`) through verbatim and in order, in `rest`.
   */
  readonly unknown: 'error' | 'keep';
}

export interface ParsedGoFlags<O extends GoFlagOptions> {
  /** The last value of each flag given (Go's flag package keeps the last too); durations in ms. */
  readonly values: GoFlagValues<O>;
  /** The known flags given, in order of first appearance. */
  readonly given: readonly (keyof O & string)[];
  /** With unknown: 'keep', the arguments not consumed; otherwise empty. */
  readonly rest: readonly string[];
}

export class GoFlagError extends Error {
  override readonly name = 'GoFlagError';
  readonly code = 'API_ERR_FLAG';
  /** The flag at fault (without dashes), or undefined for an argument that is no flag at all. */
  readonly flag: string | undefined;

  constructor(flag: string | undefined, message: string) {
    super(flag === undefined ? message : `--${flag}: ${message}`);
    this.flag = flag;
  }
}

const FLAG = /^--?([A-Za-z0-9][A-Za-z0-9_.-]*)(?:=(.*))?$/s;

/** Pure: argv after the program name. Throws GoFlagError naming the flag at fault. */
export function parseGoFlags<O extends GoFlagOptions>(argv: readonly string[], config: GoFlagConfig<O>): ParsedGoFlags<O> {
  const values: Record<string, string | boolean | number> = {};
  const given: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      if (config.unknown === 'error' && i + 1 < argv.length) throw new GoFlagError(undefined, `unexpected argument ${JSON.stringify(argv[i + 1])}`);
      rest.push(...argv.slice(i + 1));
      break;
    }
    const match = FLAG.exec(arg);
    const flag = match?.[1] ?? '';
    const spec = Object.hasOwn(config.options, flag) ? config.options[flag] : undefined;
    if (match === null || spec === undefined) {
      if (config.unknown === 'keep') {
        rest.push(arg);
        continue;
      }
      throw match === null ? new GoFlagError(undefined, `unexpected argument ${JSON.stringify(arg)}`) : new GoFlagError(flag, 'unknown flag');
    }
    let text = match[2];
    if (text === undefined && spec.type !== 'boolean') {
      text = argv[++i];
      if (text === undefined) throw new GoFlagError(flag, 'needs a value');
    }
    values[flag] = typedValue(flag, spec, text);
    if (!given.includes(flag)) given.push(flag);
  }
  return { values: values as GoFlagValues<O>, given: given as (keyof O & string)[], rest };
}

function typedValue(flag: string, spec: GoFlagSpec, text: string | undefined): string | boolean | number {
  if (spec.type === 'boolean') return parseGoBool(flag, text ?? 'true');
  if (spec.type === 'duration') return parseDurationFlag(flag, text ?? '');
  if (spec.type === 'integer') return parseIntegerFlag(flag, text ?? '', spec);
  return text ?? '';
}

/**
 * An integer flag's value: decimal digits only (no sign, exponent or fraction: a typo is
 * refused, not rounded), within `bounds`. Throws GoFlagError naming the flag.
 */
export function parseIntegerFlag(flag: string, text: string, bounds: IntegerBounds = {}): number {
  const min = bounds.min ?? 0;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? (min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`) : `an integer from ${min} to ${max}`;
    throw new GoFlagError(flag, `${JSON.stringify(text)} is not ${range}`);
  }
  return n;
}

/** Go's strconv.ParseBool, as a boolean flag's `=value` or an environment variable standing in for one. */
export function parseGoBool(flag: string, text: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw new GoFlagError(flag, `${JSON.stringify(text)} is not true or false`);
}

/** A duration flag's value in milliseconds, in the one grammar; bounded by what a timer can wait. */
export function parseDurationFlag(flag: string, text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    // No cause: the message already carries the grammar's, and pino would print it twice.
    if (err instanceof DurationError) throw new GoFlagError(flag, err.message);
    throw err;
  }
  if (ms > MAX_TIMER_MS) throw new GoFlagError(flag, `${JSON.stringify(text)} is too long`);
  return ms;
}
