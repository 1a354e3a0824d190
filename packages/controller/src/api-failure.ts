// One place that turns a client-node failure into a ControllerError with a stable code.

import { ApiException } from '@kubernetes/client-node';
import { ControllerError } from './controller-error.js';

function statusMessage(body: unknown): string | undefined {
  const text = typeof body === 'string' ? body : undefined;
  try {
    const parsed: unknown = text === undefined ? body : JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && 'message' in parsed && typeof parsed.message === 'string') return parsed.message;
  } catch {
    // Not a Status object; the raw text is as good as it gets.
  }
  return text;
}

export function apiFailure(err: unknown, what: string): ControllerError {
  if (err instanceof ControllerError) return err;
  if (err instanceof ApiException) {
    const code = (err as ApiException<unknown>).code;
    const detail = statusMessage((err as ApiException<unknown>).body) ?? `HTTP ${code}`;
    const kind = code === 409 ? 'CONTROLLER_CONFLICT' : code === 404 ? 'CONTROLLER_NOT_FOUND' : 'CONTROLLER_API_FAILED';
    return new ControllerError(kind, `${what}: ${detail}`, { cause: err });
  }
  return new ControllerError('CONTROLLER_API_FAILED', `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
