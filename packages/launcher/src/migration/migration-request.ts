// A Migrate request as the source launcher runs it: the VMI (for identity and the size the
// completion timeout scales with) and the settings, refused by field before libvirt sees them.
import { VmiInvalidError, type DefaultedVmi } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { guestMemoryBytes } from '../convert/memory.js';
import type { MigrationPlan } from './migration-source.js';

const GIB = 1024 ** 3;
const URI = /^(tcp:\/\/[^\s/]+|unix:\/\/\/\S+)$/;

export function migrationPlan(req: cmd.MigrateRequest, vmi: DefaultedVmi): MigrationPlan {
  if (req.allowPostCopy) throw VmiInvalidError.at('allowPostCopy', 'NotSupported', 'podvirt migrates pre-copy only; set allowPostCopy to false');
  if (!/^qemu\+unix:\/\/\/(system|session)\?socket=\S+$/.test(req.destinationUri)) {
    throw VmiInvalidError.at('destination_uri', 'Invalid', `${JSON.stringify(req.destinationUri)} is not qemu+unix:///system?socket=<path>`);
  }
  for (const [field, value] of [['migrate_uri', req.migrateUri], ['disks_uri', req.disksUri]] as const) {
    if (value !== '' && !URI.test(value)) throw VmiInvalidError.at(field, 'Invalid', `${JSON.stringify(value)} is neither tcp://host[:port] nor unix:///path`);
  }
  const gib = Math.max(1, Math.ceil(Number(guestMemoryBytes(vmi)) / GIB));
  return {
    destinationUri: req.destinationUri,
    ...(req.migrateUri === '' ? {} : { migrateUri: req.migrateUri }),
    ...(req.disksUri === '' ? {} : { disksUri: req.disksUri }),
    ...(req.destinationXml === '' ? {} : { destinationXml: req.destinationXml }),
    blockMigration: req.blockMigration,
    bandwidthMiBs: Number(req.bandwidthMibPerSecond),
    autoConverge: req.allowAutoConverge,
    limits: { progressTimeoutMs: req.progressTimeoutSeconds * 1000, completionTimeoutMs: req.completionTimeoutPerGibSeconds * 1000 * gib },
  };
}
