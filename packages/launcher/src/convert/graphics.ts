import { join } from 'node:path';
import type { Vmi } from '../vmi.js';
import type { ConverterContext } from './context.js';
import { el, type XmlElement } from './xml.js';

/** autoattachGraphicsDevice (default true): VNC on a unix socket next to the serial socket, and a VGA card. */
export function convertGraphics(vmi: Vmi, ctx: ConverterContext): XmlElement[] {
  if (vmi.spec?.domain?.devices?.autoattachGraphicsDevice === false) return [];
  const socket = join(ctx.privateDir, vmi.metadata?.uid ?? '', 'virt-vnc');
  return [
    el('graphics', { type: 'vnc' }, el('listen', { type: 'socket', socket })),
    el('video', {}, el('model', { type: 'vga', vram: 16384, heads: 1 })),
  ];
}
