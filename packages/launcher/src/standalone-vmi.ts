// The VMI of a standalone run (STANDALONE_VMI), read as YAML — a superset of JSON, so one parser
// takes both spellings — and decoded as the Cmd server decodes a Sync. Loaded only when needed.

import { decodeVmi, type DefaultedVmi } from '@podvirt/api';
import { parse } from 'yaml';

export function decodeStandaloneVmi(text: string): DefaultedVmi {
  return decodeVmi(parse(text));
}
