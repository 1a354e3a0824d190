import { XdrError } from '../errors.js';
import type { XdrReader } from '../xdr/xdr-reader.js';
import type { XdrWriter } from '../xdr/xdr-writer.js';
import { STRING_MAX, UUID_SIZE } from './header.js';

/** A domain as the protocol names it (remote_nonnull_domain). `id` is -1 while inactive. */
export interface DomainRef {
  readonly name: string;
  readonly uuid: Buffer;
  readonly id: number;
}

export function writeDomainRef(w: XdrWriter, d: DomainRef): void {
  w.string(d.name, STRING_MAX).opaqueFixed(d.uuid, UUID_SIZE).int(d.id);
}

export function readDomainRef(r: XdrReader): DomainRef {
  return { name: r.string(STRING_MAX), uuid: r.opaqueFixed(UUID_SIZE), id: r.int() };
}

/** Formats 16 UUID bytes the way libvirt prints them (8-4-4-4-12 lowercase hex). */
export function uuidToString(uuid: Uint8Array): string {
  const hex = Buffer.from(uuid).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Parses a UUID string, with or without dashes, into its 16 bytes. */
export function uuidFromString(text: string): Buffer {
  const hex = text.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new XdrError(`not a UUID: ${text}`);
  return Buffer.from(hex, 'hex');
}
