// Text in a spec reaches libvirt's XML, QEMU's command line or the guest's firmware tables.
// XML cannot carry most control characters at all, and its parser turns a `\r` into `\n` (in
// an attribute, into a space): a string that does not survive that trip is refused here, by
// field, instead of being changed on the way or failing in libvirt's parser.

import { keyPath } from './unsupported-fields.js';
import { fieldPath, indexPath, isRawObject, type Validation } from './validate-context.js';

/** Keys whose value may span lines (cloud-init data, wrapped base64): tabs and line ends are fine. */
const MULTILINE_KEYS = new Set(['userData', 'networkData', 'userDataBase64', 'networkDataBase64']);
/** Keys bounded by their own rule (cloud-init data has KubeVirt's 2048-byte limit, kernelArgs the kernel's). */
const OWN_LIMIT_KEYS = new Set(['userData', 'networkData', 'userDataBase64', 'networkDataBase64', 'kernelArgs']);
/**
 * No single-line field podvirt supports needs more: paths stop at PATH_MAX (4096), image
 * references, names and models are far shorter.
 */
export const MAX_TEXT_LENGTH = 4096;

// C0 controls, DEL and C1 controls; U+FFFE and U+FFFF are not characters XML allows.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const SINGLE_LINE_BAD = /[\u0000-\u001f\u007f-\u009f\ufffe\uffff]/u;
// eslint-disable-next-line no-control-regex -- as above
const MULTILINE_BAD = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffe\uffff]/u;
// A surrogate half without its partner is not text: it cannot be written as UTF-8.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function codePoint(text: string, index: number): string {
  return `U+${(text.codePointAt(index) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The problem with one string, or undefined when it is fine. */
export function textProblem(text: string, multiline: boolean): string | undefined {
  const lone = LONE_SURROGATE.exec(text);
  if (lone) return `contains an unpaired surrogate ${codePoint(text, lone.index)} at character ${lone.index}; it is not valid Unicode text`;
  const bad = (multiline ? MULTILINE_BAD : SINGLE_LINE_BAD).exec(text);
  if (!bad) return undefined;
  const what = multiline ? 'text' : 'one line of printable text';
  return `contains the control character ${codePoint(text, bad.index)} at character ${bad.index}; this field takes ${what}`;
}

function checkString(v: Validation, path: string, key: string, text: string): void {
  const problem = textProblem(text, MULTILINE_KEYS.has(key));
  if (problem !== undefined) v.add(path, 'Invalid', problem);
  if (!OWN_LIMIT_KEYS.has(key) && text.length > MAX_TEXT_LENGTH) {
    v.add(path, 'TooLong', `is ${text.length} characters long; at most ${MAX_TEXT_LENGTH} are allowed`);
  }
}

function walk(v: Validation, path: string, key: string, value: unknown): void {
  if (typeof value === 'string') {
    checkString(v, path, key, value);
  } else if (Array.isArray(value)) {
    value.forEach((item: unknown, i) => walk(v, indexPath(path, i), key, item));
  } else if (isRawObject(value)) {
    for (const [childKey, child] of Object.entries(value)) {
      const problem = textProblem(childKey, false);
      if (problem !== undefined) v.add(path, 'Invalid', `a key ${problem}`);
      walk(v, keyPath(path, childKey), childKey, child);
    }
  }
}

/** Every string under `spec`, and the metadata strings that name the VM, checked as text. */
export function validateSpecText(v: Validation, raw: Record<string, unknown>): void {
  walk(v, 'spec', 'spec', raw['spec']);
  const metadata = raw['metadata'];
  if (!isRawObject(metadata)) return;
  for (const key of ['name', 'namespace', 'uid', 'generateName']) {
    const value = metadata[key];
    if (typeof value === 'string') checkString(v, fieldPath('metadata', key), key, value);
  }
}

/** Bytes of `text` in UTF-8, the size it has on the wire and in the guest. */
export function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}
