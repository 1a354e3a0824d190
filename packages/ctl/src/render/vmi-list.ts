import type { node } from '@podvirt/proto';
import { renderTable } from './table.js';

const HEADERS = ['NAMESPACE', 'NAME', 'PHASE', 'NODE', 'DOMAIN', 'AGENT', 'FROZEN'];

// `podvirtctl list`, sorted by namespace then name so that output does not depend on the
// order the handler keeps its VMIs in.
export function renderVmiList(vmis: readonly node.VmiSummary[]): string {
  const sorted = [...vmis].sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  const rows = sorted.map((vmi) => [
    vmi.namespace,
    vmi.name,
    orNone(vmi.phase),
    orNone(vmi.nodeName),
    domain(vmi),
    vmi.agentConnected ? 'yes' : 'no',
    vmi.fsFreezeStatus === 'frozen' ? 'yes' : 'no',
  ]);
  return renderTable(HEADERS, rows);
}

// The line kubectl prints (on stderr) when a list is empty.
export function renderEmptyList(namespace: string): string {
  return namespace === '' ? 'No resources found\n' : `No resources found in ${namespace} namespace.\n`;
}

function domain(vmi: node.VmiSummary): string {
  if (vmi.domainState === '') return '<none>';
  return vmi.domainReason === '' ? vmi.domainState : `${vmi.domainState}/${vmi.domainReason}`;
}

function orNone(value: string): string {
  return value === '' ? '<none>' : value;
}
