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
 * Why an address may not be a webhook's target, or undefined when it may. Only globally routable
 * unicast addresses may: ipaddr.js classifies the rest (loopback, private, link-local, which holds
 * the cloud metadata address 169.254.169.254, unique-local, carrier-grade NAT, reserved,
 * multicast…), and an IPv4 address mapped into IPv6 is judged as the IPv4 address it is.
 */
export function forbiddenAddressReason(ipaddr: IpAddr, address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  return range === 'unicast' ? undefined : `${parsed.toString()} is a ${range} address`;
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
