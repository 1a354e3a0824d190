import { join } from 'node:path';
import type { DefaultedVmi } from '@podvirt/api';
import type { ConverterContext } from './context.js';
import { el, type XmlElement } from './xml.js';

/** autoattachGraphicsDevice: VNC on a unix socket next to the serial socket, and a VGA card. */
export function convertGraphics(vmi: DefaultedVmi, ctx: ConverterContext, uid: string): XmlElement[] {
  if (!vmi.spec.domain.devices.autoattachGraphicsDevice) return [];
  const socket = join(ctx.privateDir, uid, 'virt-vnc');
  return [
    el('graphics', { type: 'vnc' }, el('listen', { type: 'socket', socket })),
    el('video', {}, el('model', { type: 'vga', vram: 16384, heads: 1 })),
  ];
}
