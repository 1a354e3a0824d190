// version: what this podvirtctl is and which node API it speaks. It asks no server: the node
// API has no version call, and the command must work where no handler runs.
import { node } from '@podvirt/proto';
import type { CommandResult } from './command-result.js';

export function runVersion(clientVersion: string): CommandResult {
  const data = { clientVersion, nodeApi: node.protobufPackage };
  return { data, text: `podvirtctl ${clientVersion} (node API ${node.protobufPackage})\n`, note: '' };
}
