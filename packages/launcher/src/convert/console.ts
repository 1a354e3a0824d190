import { join } from 'node:path';
import { SERIAL_LOG_FILE, type DefaultedVmi } from '@podvirt/api';
import type { ConverterContext } from './context.js';
import { el, type XmlElement } from './xml.js';

/** Where KubeVirt puts the serial console socket and its log; the console-log container tails the log. */
export function serialPaths(ctx: Pick<ConverterContext, 'privateDir'>, uid: string): { socket: string; log: string } {
  const dir = join(ctx.privateDir, uid);
  return { socket: join(dir, 'virt-serial0'), log: join(dir, SERIAL_LOG_FILE) };
}

/** A unix-socket serial port with a log file (written by qemu itself with stdio_handler=file), plus a pty console. */
export function convertConsole(vmi: DefaultedVmi, ctx: ConverterContext, uid: string): XmlElement[] {
  if (!vmi.spec.domain.devices.autoattachSerialConsole) return [];
  const { socket, log } = serialPaths(ctx, uid);
  return [
    el(
      'serial',
      { type: 'unix' },
      el('source', { mode: 'bind', path: socket }),
      el('log', { file: log, append: 'on' }),
      el('target', { port: 0 }),
    ),
    el('console', { type: 'pty' }, el('target', { type: 'serial', port: 0 })),
  ];
}
