/**
 * A minimal XML tree: the converter builds elements, one renderer turns them into text.
 * Attribute values that are `undefined` are left out, so configurators can pass optional
 * fields straight through.
 */
export interface XmlElement {
  readonly name: string;
  readonly attrs: Readonly<Record<string, string | number | undefined>>;
  readonly children: readonly XmlNode[];
}

export type XmlNode = XmlElement | string;

export function el(
  name: string,
  attrs: Readonly<Record<string, string | number | undefined>> = {},
  ...children: readonly (XmlNode | undefined | false)[]
): XmlElement {
  return { name, attrs, children: children.filter((c): c is XmlNode => c !== undefined && c !== false) };
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * XML parsers turn a literal `\r` into `\n`, and in attributes every line end or tab into a
 * space; as character references they survive as written.
 */
function escape(text: string): string {
  return text.replace(/[&<>"'\r\n\t]/g, (c) => ENTITIES[c] ?? `&#${c.charCodeAt(0)};`);
}

function escapeText(text: string): string {
  return text.replace(/[&<>"'\r]/g, (c) => ENTITIES[c] ?? `&#${c.charCodeAt(0)};`);
}

/** Pretty-printed, two-space indented; text-only elements stay on one line. */
export function renderXml(node: XmlElement, depth = 0): string {
  const pad = '  '.repeat(depth);
  const attrs = Object.entries(node.attrs)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => ` ${k}="${escape(String(v))}"`)
    .join('');
  if (node.children.length === 0) return `${pad}<${node.name}${attrs}/>`;
  if (node.children.every((c) => typeof c === 'string')) {
    return `${pad}<${node.name}${attrs}>${escapeText(node.children.join(''))}</${node.name}>`;
  }
  const inner = node.children
    .map((c) => (typeof c === 'string' ? `${pad}  ${escapeText(c)}` : renderXml(c, depth + 1)))
    .join('\n');
  return `${pad}<${node.name}${attrs}>\n${inner}\n${pad}</${node.name}>`;
}

/** First descendant (depth-first) whose path of names ends with `path`; for tests and lookups. */
export function findElement(root: XmlElement, path: string): XmlElement | undefined {
  return findAll(root, path)[0];
}

export function findAll(root: XmlElement, path: string): XmlElement[] {
  const want = path.split('/');
  const out: XmlElement[] = [];
  const walk = (node: XmlElement, trail: string[]): void => {
    const here = [...trail, node.name];
    if (here.length >= want.length && want.every((n, i) => here[here.length - want.length + i] === n)) out.push(node);
    for (const c of node.children) if (typeof c !== 'string') walk(c, here);
  };
  walk(root, []);
  return out;
}

export function textOf(node: XmlElement | undefined): string | undefined {
  if (node === undefined) return undefined;
  return node.children.filter((c): c is string => typeof c === 'string').join('');
}
