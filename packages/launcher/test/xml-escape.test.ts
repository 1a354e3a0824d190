import assert from 'node:assert/strict';
import { test } from 'node:test';
import { el, renderXml } from '../src/convert/xml.js';

// An XML parser turns a literal CR into LF, and line ends and tabs in attributes into spaces:
// written as character references they reach libvirt as the user wrote them.
test('line ends and tabs survive an XML parser as written', () => {
  const xml = renderXml(el('a', { v: 'x\ry\nz\t"' }, 'b\rc\n<&>'));
  assert.equal(xml, '<a v="x&#13;y&#10;z&#9;&quot;">b&#13;c\n&lt;&amp;&gt;</a>');
});
