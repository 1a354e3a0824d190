// The console's detach key, as virtctl's: Ctrl+] (0x1d, the telnet tradition). Pure: a chunk of
// keyboard input → what goes to the guest and whether to detach there.

export const ESCAPE_BYTE = 0x1d;

export function splitAtEscape(chunk: Buffer): { readonly forward: Buffer; readonly detach: boolean } {
  const at = chunk.indexOf(ESCAPE_BYTE);
  if (at < 0) return { forward: chunk, detach: false };
  return { forward: chunk.subarray(0, at), detach: true };
}
