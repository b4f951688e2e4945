import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { checkTargetUrl, guardedLookup, literalAddressRefusal, TargetRefusedError, type TargetPolicy } from './targets.js';

/**
 * Issue 32, item 7: where a webhook may point, for every special-purpose block of both families
 * (the IANA IPv4 and IPv6 Special-Purpose Address Registries, multicast and the transition forms
 * that carry an IPv4 address), each checked as a literal host, as a DNS answer when the endpoint
 * is saved, and as a DNS answer when a delivery connects.
 */

const ipv4Special = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.0.0/29',
  '192.0.0.8/32', '192.0.0.9/32', '192.0.0.10/32', '192.0.0.170/32', '192.0.0.171/32', '192.0.2.0/24', '192.31.196.0/24', '192.52.193.0/24',
  '192.88.99.0/24', '192.168.0.0/16', '192.175.48.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '240.0.0.0/4',
  '255.255.255.255/32', '224.0.0.0/4',
];
const ipv6Special = [
  '::1/128', '::/128', '::ffff:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '100:0:0:1::/64', '2001::/23', '2001::/32',
  '2001:1::1/128', '2001:1::2/128', '2001:1::3/128', '2001:2::/48', '2001:3::/32', '2001:4:112::/48', '2001:10::/28', '2001:20::/28',
  '2001:30::/28', '2001:db8::/32', '2002::/16', '2620:4f:8000::/48', '3fff::/20', '5f00::/16', 'fc00::/7', 'fe80::/10', 'fec0::/10',
  'ff00::/8', '::/96', '::ffff:0:0:0/96', '4000::/2', '8000::/1',
];

/** The first, a middle and the last address of a block. */
function samples(cidr: string): string[] {
  const [address, bits] = cidr.split('/') as [string, string];
  const family = ipaddr.parse(address).kind() === 'ipv4' ? ipaddr.IPv4 : ipaddr.IPv6;
  const first = family.networkAddressFromCIDR(cidr);
  const last = family.broadcastAddressFromCIDR(cidr);
  const bytes = first.toByteArray();
  // Flip a bit in the host part's middle, when there is one.
  const hostBits = bytes.length * 8 - Number(bits);
  if (hostBits > 2) {
    const bit = bytes.length * 8 - 1 - Math.floor(hostBits / 2);
    bytes[bit >> 3]! |= 0x80 >> (bit & 7);
  }
  const middle = ipaddr.fromByteArray(bytes);
  return [...new Set([first.toString(), middle.toString(), last.toString()])];
}

// The spellings the assessment found passing, and more of their kind.
const transitionForms = [
  '::7f00:1', '::127.0.0.1', '::a9fe:a9fe', '::169.254.169.254', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:0:7f00:1', '64:ff9b::7f00:1',
  '64:ff9b::127.0.0.1', '64:ff9b:1::a9fe:a9fe', '2002:7f00:1::', '2002:a9fe:a9fe::1', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001::8000:63bf:3fff:fdd2',
  '2606:4700::5efe:7f00:1', '2606:4700::200:5efe:a9fe:a9fe', '::8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1',
];
const publicAddresses = ['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:82a::200e', '::ffff:8.8.8.8'];

const refused = [
  ...ipv4Special.flatMap(samples).map((address) => ({ address, family: 4 as const })),
  ...ipv6Special.flatMap(samples).map((address) => ({ address, family: 6 as const })),
  ...transitionForms.map((address) => ({ address, family: 6 as const })),
];

const policyResolving = (answers: LookupAddress[]): TargetPolicy => ({ allowPrivateTargets: false, allowHttp: false, resolve: async () => answers });
const literalUrl = (address: string) => (address.includes(':') ? `https://[${address}]/hook` : `https://${address}/hook`);

function lookupOutcome(address: string, family: 4 | 6): Promise<Error | null> {
  return new Promise((resolve) => guardedLookup(async () => [{ address, family }])('hooks.example.com', { all: true }, (error) => resolve(error)));
}

describe('webhook targets: every special-purpose address is refused', () => {
  it(`has samples of every block (${refused.length} addresses)`, () => {
    expect(refused.length).toBeGreaterThan(150);
  });

  it.each(refused)('$address, as a literal host (on save and at send)', async ({ address }) => {
    const policy = policyResolving([]);
    expect(await checkTargetUrl(literalUrl(address), policy)).toMatch(/^must not point at a private address/);
    expect(await literalAddressRefusal(new URL(literalUrl(address)), policy)).toMatch(/^Refused to connect/);
  });

  it.each(refused)('$address, as a DNS answer (on save, and at the connection, alone or among public ones)', async ({ address, family }) => {
    expect(await checkTargetUrl('https://hooks.example.com/hook', policyResolving([{ address, family }]))).toMatch(/resolves to/);
    expect(await checkTargetUrl('https://hooks.example.com/hook', policyResolving([{ address: '93.184.216.34', family: 4 }, { address, family }]))).toMatch(/resolves to/);
    expect(await lookupOutcome(address, family)).toBeInstanceOf(TargetRefusedError);
  });

  it('names the IPv4 address a transition form carries', async () => {
    expect(await checkTargetUrl('https://[::7f00:1]/', policyResolving([]))).toContain('127.0.0.1');
    expect(await checkTargetUrl('https://[64:ff9b::a9fe:a9fe]/', policyResolving([]))).toContain('169.254.169.254');
    expect(await checkTargetUrl('https://[2002:7f00:1::]/', policyResolving([]))).toContain('127.0.0.1');
  });

  it.each(publicAddresses)('allows the public %s, literal and resolved', async (address) => {
    const family = address.includes(':') && !address.startsWith('::ffff:') ? 6 : 4;
    expect(await checkTargetUrl(literalUrl(address), policyResolving([]))).toBeUndefined();
    expect(await checkTargetUrl('https://hooks.example.com/hook', policyResolving([{ address, family }]))).toBeUndefined();
    expect(await lookupOutcome(address, family)).toBeNull();
  });
});
