// A firmware (SMBIOS) UUID derived from the VMI name: a name-based SHA-1 UUID (RFC 4122
// version 5) in the same namespace KubeVirt's VM controller uses for its "legacy" stable
// UUIDs, so a VMI gets the UUID KubeVirt would give a VM of that name, and the same one on
// every restart. (KubeVirt gives a bare VMI a random UUID; podvirt's defaulting is pure.)

import { createHash } from 'node:crypto';

export const FIRMWARE_UUID_NAMESPACE = '6a1a24a1-4061-4607-8bf4-a3963d0c5895';

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replaceAll('-', ''), 'hex');
}

export function nameBasedUuid(namespace: string, name: string): string {
  const hash = createHash('sha1').update(uuidBytes(namespace)).update(name, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function deriveFirmwareUuid(vmiName: string): string {
  return nameBasedUuid(FIRMWARE_UUID_NAMESPACE, vmiName);
}
