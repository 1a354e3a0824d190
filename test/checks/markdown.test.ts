import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anchors, longFlags, relativeLinks, section, tableRow, tables, ticked } from './markdown.js';

const DOC = `# Tool

Intro.

## Command line

\`\`\`
# a comment in code, not a heading
tool [--alpha N] [--beta-gamma=x] [-v]
\`\`\`

Grammar: \`--flag value\` or \`--flag=value\`.

### Inside

More \`--delta\`.

## Files

The table lists a selection:

| file | role |
|---|---|
| \`a.ts\`, \`dir/*\` | one \`a|b\` cell |
| \`b.ts\` | two |

## Flags

| program | command line |
|---|---|
| \`tool\` | \`--alpha\` \`--beta-gamma\` |
`;

test('section runs to the next heading of its level or higher, skipping headings in fenced code', () => {
  const text = section(DOC, 'Command line') ?? assert.fail('no section');
  assert.match(text, /a comment in code/);
  assert.match(text, /--delta/, 'a subsection belongs to its section');
  assert.doesNotMatch(text, /a\.ts/);
  assert.equal(section(DOC, 'Nowhere'), undefined);
});

test('tables: header, rows (a pipe inside backticks stays in its cell), heading and the paragraph above', () => {
  const [files, flags] = tables(DOC);
  assert.deepEqual(files?.header, ['file', 'role']);
  assert.deepEqual(files?.rows, [['`a.ts`, `dir/*`', 'one `a|b` cell'], ['`b.ts`', 'two']]);
  assert.equal(files?.heading, 'Files');
  assert.equal(files?.intro, 'The table lists a selection:');
  assert.equal(flags?.heading, 'Flags');
  assert.equal(tableRow(DOC, 'Flags', 'tool'), '`tool` | `--alpha` `--beta-gamma`');
  assert.equal(tableRow(DOC, 'Files', 'tool'), undefined);
});

test('longFlags reads --name in every spelling, not single-dash flags nor the grammar\'s --flag placeholder', () => {
  assert.deepEqual([...longFlags(section(DOC, 'Command line') ?? '')].sort(), ['alpha', 'beta-gamma', 'delta']);
  assert.deepEqual(ticked('`a` and `b c`'), ['a', 'b c']);
});

test('anchors are GitHub\'s: lower case, punctuation dropped, spaces as dashes, repeats numbered, code skipped', () => {
  const md = "# Tool\n\n## hostDisk: a file of the node\n\n## The compute container's capabilities\n\n## Node API (`proto/node.proto`)\n\n```\n# not a heading\n```\n\n## Tool\n";
  assert.deepEqual([...anchors(md)], ['tool', 'hostdisk-a-file-of-the-node', 'the-compute-containers-capabilities', 'node-api-protonodeproto', 'tool-1']);
});

test('relativeLinks finds file and fragment, skipping web addresses, inline code and fenced code', () => {
  const md = 'See [a](docs/a.md#one), [b](#two) and [web](https://example.org/x.md).\n`[c](not/a/link.md)`\n```\n[d](in/code.md)\n```\n[e](../README.md)\n';
  assert.deepEqual(relativeLinks(md), [
    { line: 1, path: 'docs/a.md', fragment: 'one' },
    { line: 1, path: '', fragment: 'two' },
    { line: 6, path: '../README.md' },
  ]);
});
