// How deeply a parsed JSON value nests, measured without recursion. JSON.parse builds a value
// of any depth, but every recursive walk after it (validation, JSON.stringify, a deep copy)
// overflows the stack somewhere past a few thousand levels; the depth is therefore checked
// first, iteratively, and a value that nests too deep is refused by name before anything
// walks it. kube-apiserver's JSON decoder stops at 10,000 levels ("exceeded max depth").

/** Where a value first nests deeper than the limit. */
export interface DepthExcess {
  /** The first keys and indices on the way down (`spec.x[0][0]`), cut with `…` when longer. */
  readonly path: string;
  readonly limit: number;
}

const SHOWN_SEGMENTS = 6;

interface Frame {
  readonly value: unknown;
  readonly depth: number;
  readonly parent: Frame | undefined;
  readonly key: string | number;
}

function showPath(frame: Frame): string {
  const keys: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) keys.push(f.key);
  keys.reverse();
  const shown = keys.slice(0, SHOWN_SEGMENTS).reduce<string>((path, key) => (typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`), '');
  return keys.length > SHOWN_SEGMENTS ? `${shown}…` : shown;
}

/**
 * The first place `value` holds an object or array more than `limit` levels deep (the value
 * itself, when an object or array, is level 1), or undefined when it never does.
 */
export function jsonDepthExcess(value: unknown, limit: number): DepthExcess | undefined {
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: '' }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const v = frame.value;
    if (v === null || typeof v !== 'object') continue;
    if (frame.depth > limit) return { path: showPath(frame), limit };
    if (Array.isArray(v)) v.forEach((item: unknown, i) => stack.push({ value: item, depth: frame.depth + 1, parent: frame, key: i }));
    else for (const [key, item] of Object.entries(v)) stack.push({ value: item, depth: frame.depth + 1, parent: frame, key });
  }
  return undefined;
}
