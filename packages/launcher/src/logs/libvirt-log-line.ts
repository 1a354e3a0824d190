/** One line of libvirt's stderr log: `<date> <time>+0000: <thread>: <level> : <function>:<line> : <message>`. */
export interface LibvirtLogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly msg: string;
  readonly thread?: string;
  readonly pos?: string;
  readonly timestamp?: string;
}

const LEVELS: Record<string, LibvirtLogLine['level']> = { debug: 'debug', info: 'info', warning: 'warn', error: 'error' };
const LINE = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+\+\d{4}): (\d+): (debug|info|warning|error) : ([^ ]+) : (.*)$/;

/** Lines that do not match (continuations, early startup text) keep their text at level info. */
export function parseLibvirtLogLine(line: string): LibvirtLogLine {
  const m = LINE.exec(line);
  if (m === null) return { level: 'info', msg: line };
  const [, timestamp, thread, level = 'info', pos, msg = ''] = m;
  return { level: LEVELS[level] ?? 'info', msg, ...(thread ? { thread } : {}), ...(pos ? { pos } : {}), ...(timestamp ? { timestamp } : {}) };
}
