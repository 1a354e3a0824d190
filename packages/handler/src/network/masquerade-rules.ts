import type { NftTable } from './nft-ruleset.js';

export interface MasqueradeRuleInput {
  readonly family: 'ip' | 'ip6';
  /** The pod's interface (inbound traffic arrives there). */
  readonly podIface: string;
  /** The in-pod bridge towards the guest. */
  readonly bridge: string;
  readonly guestIP: string;
  readonly gatewayIP: string;
  /** Listed ports; none means every port is forwarded. */
  readonly ports: ReadonlyArray<{ readonly protocol: 'tcp' | 'udp'; readonly port: number }>;
}

const PRE = 'KUBEVIRT_PREINBOUND';
const POST = 'KUBEVIRT_POSTINBOUND';

/**
 * KubeVirt's masquerade NAT for one family: the guest's outbound traffic leaves with the pod's
 * address; inbound traffic to the pod on the listed ports (or all) goes to the guest; and
 * connections from inside the pod to its loopback reach the guest too, with the gateway as
 * their source so that the guest's replies come back through the bridge.
 */
export function masqueradeRules(m: MasqueradeRuleInput): NftTable {
  const loopback = m.family === 'ip' ? '127.0.0.1' : '::1';
  const fam = m.family;
  const pre: string[][] = [];
  const post: string[][] = [];
  const output: string[][] = [];
  if (m.ports.length === 0) {
    pre.push(['counter', 'dnat', 'to', m.guestIP]);
    post.push([fam, 'saddr', `{ ${loopback} }`, 'counter', 'snat', 'to', m.gatewayIP]);
    output.push([fam, 'daddr', `{ ${loopback} }`, 'counter', 'dnat', 'to', m.guestIP]);
  }
  for (const p of m.ports) {
    pre.push([p.protocol, 'dport', `{ ${p.port} }`, 'counter', 'dnat', 'to', m.guestIP]);
    post.push([p.protocol, 'dport', String(p.port), fam, 'saddr', `{ ${loopback} }`, 'counter', 'snat', 'to', m.gatewayIP]);
    output.push([fam, 'daddr', `{ ${loopback} }`, p.protocol, 'dport', String(p.port), 'counter', 'dnat', 'to', m.guestIP]);
  }
  return {
    family: fam,
    name: 'nat',
    chains: [
      { name: 'prerouting', hook: { type: 'nat', hook: 'prerouting', priority: -100 }, rules: [['iifname', `"${m.podIface}"`, 'counter', 'jump', PRE]] },
      { name: 'input', hook: { type: 'nat', hook: 'input', priority: 100 }, rules: [] },
      { name: 'output', hook: { type: 'nat', hook: 'output', priority: -100 }, rules: output },
      {
        name: 'postrouting',
        hook: { type: 'nat', hook: 'postrouting', priority: 100 },
        rules: [[fam, 'saddr', m.guestIP, 'counter', 'masquerade'], ['oifname', `"${m.bridge}"`, 'counter', 'jump', POST]],
      },
      { name: PRE, rules: pre },
      { name: POST, rules: post },
    ],
  };
}
