// An nftables ruleset as data, rendered to the text `nft -f` loads in one transaction.

import { HandlerError } from '../handler-error.js';

export interface NftChain {
  readonly name: string;
  /** Base chains: `{ type nat hook prerouting priority -100; }`; none for a regular chain. */
  readonly hook?: { readonly type: 'nat' | 'filter'; readonly hook: 'prerouting' | 'input' | 'output' | 'postrouting' | 'forward'; readonly priority: number };
  /** Each rule as its tokens, e.g. ['ip', 'saddr', '10.0.2.2', 'counter', 'masquerade']. */
  readonly rules: ReadonlyArray<readonly string[]>;
}

export interface NftTable {
  readonly family: 'ip' | 'ip6';
  readonly name: string;
  readonly chains: readonly NftChain[];
}

const TOKEN = /^[A-Za-z0-9_.:/,{} "-]+$/;

/**
 * `nft -f` input; tokens are checked so that no value can smuggle in a second statement. Each
 * table replaces one of its name (declared, deleted, made again in the same transaction), so
 * loading the text twice leaves the rules once.
 */
export function renderRuleset(tables: readonly NftTable[]): string {
  const lines: string[] = [];
  for (const t of tables) {
    lines.push(`table ${t.family} ${t.name}`, `delete table ${t.family} ${t.name}`, `table ${t.family} ${t.name} {`);
    for (const c of t.chains) {
      lines.push(`  chain ${c.name} {`);
      if (c.hook) lines.push(`    type ${c.hook.type} hook ${c.hook.hook} priority ${c.hook.priority}; policy accept;`);
      for (const rule of c.rules) {
        for (const token of rule) if (!TOKEN.test(token)) throw new HandlerError('HANDLER_ERR_POD_NETWORK', `nft token ${JSON.stringify(token)} has characters a rule cannot carry`);
        lines.push(`    ${rule.join(' ')}`);
      }
      lines.push('  }');
    }
    lines.push('}');
  }
  return `${lines.join('\n')}\n`;
}
