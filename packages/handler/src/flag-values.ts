// What the handler's flag parsers (handler-args.ts, live-migration/migration-settings.ts) share:
// the error of a bad flag, and a duration flag read in the one grammar (`@podvirt/api/duration`).

import { DurationError, parseDuration } from '@podvirt/api/duration';
import { HandlerError } from './handler-error.js';

export function invalidArgs(message: string): HandlerError {
  return new HandlerError('HANDLER_ERR_INVALID_ARGS', message);
}

/** Milliseconds of a duration flag; a text outside the grammar is refused naming the flag. */
export function durationFlagMs(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    if (err instanceof DurationError) throw invalidArgs(`${flag}: ${err.message}`);
    throw err;
  }
}
