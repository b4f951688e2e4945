import { promises as dns, type LookupAddress } from 'node:dns';

/** Resolves a host name to every address it has (dns.lookup with all: true by default). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** Where endpoints may point: the operator's settings, and the resolver (tests hand in their own). */
export interface TargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: loopback, private and link-local addresses are allowed (intranets, tests). */
  allowPrivateTargets: boolean;
  /** WEBHOOK_ALLOW_HTTP: plain http URLs are allowed (intranets, tests). */
  allowHttp: boolean;
  resolve: Resolver;
}

/** A delivery refused because of where its URL leads. */
export class TargetRefusedError extends Error {
  override name = 'TargetRefusedError';
}

/**
 * Why an address may not be a webhook's target, or undefined when it may (issue 32, item 7).
 *
 * - IPv4: only what ipaddr.js classifies `unicast`: its range() lists hold the IANA IPv4
 *   special-purpose registry (loopback, private, link-local with the cloud metadata address
 *   169.254.169.254, carrier-grade NAT, 192.0.0.0/24, documentation, benchmarking, AS112, AMT,
 *   6to4 relays, 240/4, broadcast, multicast…).
 * - IPv6: only global unicast: inside 2000::/3 and `unicast` for ipaddr.js (whose lists hold the
 *   IANA IPv6 special-purpose registry: documentation, ORCHID, 2001::/23, AS112, discard…).
 *   Everything outside 2000::/3 is refused (the IPv4-compatible ::/96, whose `::7f00:1` ipaddr.js
 *   calls unicast, among them). An IPv4-mapped address (::ffff:a.b.c.d) is judged as the IPv4
 *   address it is. The transition forms that carry an IPv4 address (IPv4-compatible, SIIT
 *   ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32,
 *   an ISATAP interface id) are refused whatever they embed, and the reason names the embedded
 *   address: a gateway on the service's own network would carry the request to it.
 */
export function forbiddenAddressReason(ipaddr: IpAddr, given: string): string | undefined {
  const address = canonicalAddress(given);
  if (address === undefined || !ipaddr.isValid(address)) return `${given} is not an IP address`;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range();
    return range === 'unicast' ? undefined : `${parsed.toString()} is a ${range} address`;
  }
  const v6 = parsed as import('ipaddr.js').IPv6;
  if (v6.isIPv4MappedAddress()) {
    const v4 = v6.toIPv4Address();
    const range = v4.range();
    return range === 'unicast' ? undefined : `${v6.toString()} is the IPv4-mapped ${v4.toString()}, a ${range} address`;
  }
  const embedded = embeddedIPv4(ipaddr, v6);
  if (embedded) return `${v6.toString()} is a ${embedded.form} address carrying ${embedded.v4}${embedded.v4Range === 'unicast' ? '' : `, a ${embedded.v4Range} address`}`;
  const range = v6.range();
  if (range !== 'unicast') return `${v6.toString()} is a ${range} address`;
  // 2000::/3: the first three bits 001.
  if (v6.parts[0]! >> 13 !== 0b001) return `${v6.toString()} is outside global unicast (2000::/3)`;
  return undefined;
}

/**
 * An IPv6 address in the WHATWG URL parser's canonical form (hex groups, zeros compressed), an
 * IPv4 address as given; undefined when it is neither. ipaddr.js reads a trailing dotted quad
 * after `::` as IPv4-mapped (`::127.0.0.1` as `::ffff:127.0.0.1`), not as the IPv4-compatible
 * address it is; the canonical form (`::7f00:1`) leaves nothing to read two ways.
 */
function canonicalAddress(address: string): string | undefined {
  if (!address.includes(':')) return address;
  try {
    const host = new URL(`http://[${address}]/`).hostname;
    return host.slice(1, -1);
  } catch {
    return undefined;
  }
}

/** The IPv4 address an IPv6 transition form carries, and which form; undefined for none. */
function embeddedIPv4(ipaddr: IpAddr, v6: import('ipaddr.js').IPv6): { form: string; v4: string; v4Range: string } | undefined {
  const parts = v6.parts;
  const v4From = (high: number, low: number) => {
    const v4 = new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
    return { v4: v4.toString(), v4Range: v4.range() };
  };
  const [p0, p1, p2, p3, p4, p5, p6, p7] = parts as [number, number, number, number, number, number, number, number];
  const zeroHigh = p0 === 0 && p1 === 0 && p2 === 0 && p3 === 0;
  // ::/96, IPv4-compatible (deprecated): but :: and ::1, which are what they are.
  if (zeroHigh && p4 === 0 && p5 === 0 && (p6 !== 0 || p7 > 1)) return { form: 'IPv4-compatible', ...v4From(p6, p7) };
  // ::ffff:0:0:0/96, SIIT (RFC 6145).
  if (zeroHigh && p4 === 0xffff && p5 === 0) return { form: 'IPv4-translated (SIIT)', ...v4From(p6, p7) };
  // 64:ff9b::/96 and 64:ff9b:1::/48, NAT64 (RFC 6052, RFC 8215): the address in the last 32 bits.
  if (p0 === 0x64 && p1 === 0xff9b && (p2 === 0 || p2 === 1)) return { form: 'NAT64', ...v4From(p6, p7) };
  // 2002::/16, 6to4: the relay's IPv4 address in bits 16–47.
  if (p0 === 0x2002) return { form: '6to4', ...v4From(p1, p2) };
  // 2001::/32, Teredo: the client's IPv4 address, inverted, in the last 32 bits.
  if (p0 === 0x2001 && p1 === 0) return { form: 'Teredo', ...v4From(p6 ^ 0xffff, p7 ^ 0xffff) };
  // An ISATAP interface id (RFC 5214): ::0:5efe:a.b.c.d or ::200:5efe:a.b.c.d, under any prefix.
  if ((p4 === 0 || p4 === 0x200) && p5 === 0x5efe) return { form: 'ISATAP', ...v4From(p6, p7) };
  return undefined;
}

type IpAddr = typeof import('ipaddr.js');
let ipaddrModule: Promise<IpAddr> | undefined;
/** ipaddr.js loads with the first address check, not at start (see sender.ts on memory). */
const loadIpaddr = () => (ipaddrModule ??= import('ipaddr.js').then((module) => module.default));

function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks an endpoint URL when it is created or changed: an https URL without credentials whose
 * host (a literal address, or every address its name resolves to) is public. Answers what is
 * wrong, or undefined. The same check runs again at every send, on the addresses the connection
 * actually uses (guardedLookup), so a name that resolves elsewhere later is refused then.
 */
export async function checkTargetUrl(text: string, policy: TargetPolicy): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (policy.allowPrivateTargets) return undefined;
  const ipaddr = await loadIpaddr();
  const host = bareHost(url);
  if (ipaddr.isValid(host)) {
    const reason = forbiddenAddressReason(ipaddr, host);
    return reason === undefined ? undefined : `must not point at a private address: ${reason}`;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await policy.resolve(host);
  } catch {
    return `must have a host that resolves: ${host} does not`;
  }
  if (addresses.length === 0) return `must have a host that resolves: ${host} does not`;
  for (const { address } of addresses) {
    const reason = forbiddenAddressReason(ipaddr, address);
    if (reason !== undefined) return `must not point at a private address: ${host} resolves to ${reason}`;
  }
  return undefined;
}

/** The send-time check of a URL whose host is a literal address (a connection to one looks nothing up). */
export async function literalAddressRefusal(url: URL, policy: TargetPolicy): Promise<string | undefined> {
  if (policy.allowPrivateTargets) return undefined;
  const ipaddr = await loadIpaddr();
  const host = bareHost(url);
  if (!ipaddr.isValid(host)) return undefined;
  const reason = forbiddenAddressReason(ipaddr, host);
  return reason === undefined ? undefined : `Refused to connect: ${reason}`;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the delivery connections: it resolves the name and refuses the connection when
 * any address is not public, so the address checked is the address connected to, and a name
 * rebound to a private address after the endpoint was saved (DNS rebinding) reaches nothing.
 */
export function guardedLookup(resolve: Resolver) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    Promise.all([resolve(hostname), loadIpaddr()]).then(
      ([addresses, ipaddr]) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), '');
        for (const { address } of addresses) {
          const reason = forbiddenAddressReason(ipaddr, address);
          if (reason !== undefined) return callback(new TargetRefusedError(`Refused to connect: ${hostname} resolves to ${reason}`), '');
        }
        if (options.all === true) return callback(null, addresses);
        const [first] = addresses;
        callback(null, first!.address, first!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
