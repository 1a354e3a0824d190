import { decodeVmiJson, VmiInvalidError, type DefaultedVmi } from '@podvirt/api';
import type { VmiRef } from '../domain/vmi-ref.js';

/** The request's VMI JSON; anything but a JSON object is refused by the request field that carries it. */
export function parseVmiJson(bytes: Uint8Array): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw VmiInvalidError.at('vmi_json', 'Invalid', `not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw VmiInvalidError.at('vmi_json', 'TypeInvalid', 'must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** Sync's path, and the only decode per Sync: the one decode of @podvirt/api, from the request's text. */
export function decodeVmiRequest(bytes: Uint8Array): DefaultedVmi {
  return decodeVmiJson(Buffer.from(bytes).toString('utf8'), { jsonField: 'vmi_json' });
}

/**
 * The other lifecycle calls need only to know which VMI is meant: a VMI that no longer
 * decodes (a newer spec, a stricter rule) must still be stoppable and deletable.
 */
export function vmiRefOf(bytes: Uint8Array): VmiRef {
  const metadata = parseVmiJson(bytes)['metadata'];
  if (typeof metadata !== 'object' || metadata === null) return {};
  const m = metadata as Record<string, unknown>;
  const text = (key: string): string | undefined => (typeof m[key] === 'string' ? m[key] : undefined);
  const namespace = text('namespace');
  const name = text('name');
  const uid = text('uid');
  return { metadata: { ...(namespace !== undefined && { namespace }), ...(name !== undefined && { name }), ...(uid !== undefined && { uid }) } };
}
