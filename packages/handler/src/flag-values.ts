// What the handler's flag parsers (handler-args.ts, live-migration/migration-settings.ts) share:
// the error of a bad flag, a duration flag read in the one grammar (`@podvirt/api/duration`)
// and bounded as go-flags bounds it, and an integer flag read by go-flags' integer parser.

import { DurationError, MAX_TIMER_MS, parseDuration } from '@podvirt/api/duration';
import { GoFlagError, parseIntegerFlag, type IntegerBounds } from '@podvirt/api/go-flags';
import { HandlerError } from './handler-error.js';

export function invalidArgs(message: string): HandlerError {
  return new HandlerError('HANDLER_ERR_INVALID_ARGS', message);
}

/**
 * Milliseconds of a duration flag; a text outside the grammar, or longer than a timer can wait
 * (each one ends up in a timer, here or in the launcher), is refused naming the flag.
 */
export function durationFlagMs(flag: string, text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    if (err instanceof DurationError) throw invalidArgs(`${flag}: ${err.message}`);
    throw err;
  }
  if (ms > MAX_TIMER_MS) throw invalidArgs(`${flag}: ${JSON.stringify(text)} is too long`);
  return ms;
}

/** An integer flag within `bounds` (decimal digits only), refused naming the flag. `flag` with its dashes. */
export function integerFlag(flag: string, text: string, bounds: IntegerBounds): number {
  try {
    return parseIntegerFlag(flag.replace(/^--/, ''), text, bounds);
  } catch (err) {
    if (err instanceof GoFlagError) throw invalidArgs(err.message);
    throw err;
  }
}
