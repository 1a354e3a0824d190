// A strict well-formedness check of the XML the converter renders (elements, quoted
// attributes, entity and character references, XML 1.0 characters). libvirt's schema check
// (xmllint --relaxng) runs on a sample in the fuzz test; this one runs on every case.

const NAME = '[A-Za-z_][A-Za-z0-9_.:-]*';
const REF = '&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);';
const ATTR_VALUE = `"(?:[^"<&]|${REF})*"`;
const TAG_RE = new RegExp(`^<(/?)(${NAME})((?:\\s+${NAME}=${ATTR_VALUE})*)\\s*(/?)>`);
const TEXT_RE = new RegExp(`^(?:[^<&]|${REF})*`);
// eslint-disable-next-line no-control-regex -- what XML 1.0 forbids is the point
const NOT_XML_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Undefined when `xml` is one well-formed element; else what is wrong and where. */
export function xmlProblem(xml: string): string | undefined {
  const bad = NOT_XML_CHAR.exec(xml);
  if (bad) return `character U+${(xml.codePointAt(bad.index) ?? 0).toString(16)} at ${bad.index} is not allowed in XML`;
  const stack: string[] = [];
  let rest = xml.trim();
  let roots = 0;
  while (rest.length > 0) {
    if (rest.startsWith('<')) {
      const tag = TAG_RE.exec(rest);
      if (!tag) return `malformed tag at …${rest.slice(0, 60)}`;
      const [whole, close, name = '', , selfClosing] = tag;
      if (close) {
        if (stack.pop() !== name) return `unbalanced </${name}>`;
      } else if (!selfClosing) {
        if (stack.length === 0) roots += 1;
        stack.push(name);
      } else if (stack.length === 0) roots += 1;
      rest = rest.slice(whole.length);
    } else {
      const text = TEXT_RE.exec(rest)?.[0] ?? '';
      if (text.length === 0) return `stray & at …${rest.slice(0, 60)}`;
      if (stack.length === 0 && text.trim() !== '') return 'text outside the root element';
      rest = rest.slice(text.length);
    }
  }
  if (stack.length > 0) return `unclosed <${stack.at(-1) ?? ''}>`;
  return roots === 1 ? undefined : `${roots} root elements`;
}
