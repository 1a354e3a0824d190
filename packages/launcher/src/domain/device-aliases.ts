// The VMI's own names for the domain's disks and NICs, read from the live domain XML: libvirt's
// stats name a device by its target (vda, tap0), metrics name it as the VMI does (the alias
// `ua-<name>` the converter gives every disk and interface, without its prefix).

const DEVICE = /<(disk|interface)\b[\s\S]*?<\/\1>/g;
const TARGET = /<target\b[^>]*\bdev=['"]([^'"]+)['"]/;
const ALIAS = /<alias\b[^>]*\bname=['"]ua-([^'"]+)['"]/;

/** Target device name → VMI disk or interface name, for the devices that carry a `ua-` alias. */
export function deviceAliases(xml: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of xml.matchAll(DEVICE)) {
    const target = TARGET.exec(m[0])?.[1];
    const alias = ALIAS.exec(m[0])?.[1];
    if (target !== undefined && alias !== undefined) out[target] = alias;
  }
  return out;
}

/**
 * libvirt's `net.N.name` and `block.N.name` stats labels, each with an `…alias` sibling naming
 * the VMI's device where the domain XML has one.
 */
export function withDeviceAliases(labels: Readonly<Record<string, string>>, aliases: Readonly<Record<string, string>>): Record<string, string> {
  const out = { ...labels };
  for (const [key, dev] of Object.entries(labels)) {
    const m = /^((?:net|block)\.\d+)\.name$/.exec(key);
    const alias = m === null ? undefined : aliases[dev];
    if (m !== null && alias !== undefined) out[`${m[1]}.alias`] = alias;
  }
  return out;
}
