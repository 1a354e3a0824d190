// Cache and io modes of a disk's <driver>, chosen as KubeVirt's converter chooses them for
// persistent disks (PVC): cache `none` where the file or device takes O_DIRECT, else
// `writethrough`; io `native` only with cache `none` on a block device or a fully allocated
// image. A shareable disk gets cache `none` (decodeVmi refuses any other): two writers cannot
// each keep a host page cache. The modes a disk names are valid already (decodeVmi).

import { VmiInvalidError, type DefaultedDisk } from '@podvirt/api';
import type { DiskIoSupport } from './context.js';
import type { VolumeSource } from './volume-source.js';

export interface DriverModes {
  readonly cache?: string;
  readonly io?: string;
}

export function driverModes(disk: DefaultedDisk, field: string, source: VolumeSource, support: DiskIoSupport | undefined): DriverModes {
  let cache: string | undefined = disk.cache;
  if (disk.shareable === true) cache ??= 'none';
  if (source.persistent === true && support !== undefined) {
    if (cache === 'none' && !support.directIo) {
      throw VmiInvalidError.at(`${field}.cache`, 'Invalid', `cache "none" needs direct I/O, which the filesystem holding ${source.path} does not support`);
    }
    cache ??= support.directIo ? 'none' : 'writethrough';
  }
  let io: string | undefined = disk.io;
  if (io === 'native' && cache !== 'none') throw VmiInvalidError.at(`${field}.io`, 'Invalid', 'io "native" needs cache "none"');
  if (io === undefined && cache === 'none' && source.persistent === true && (source.block === true || support?.preallocated === true)) io = 'native';
  return { ...(cache === undefined ? {} : { cache }), ...(io === undefined ? {} : { io }) };
}
