// Where authcap may POST webhooks. A webhook URL is chosen by whoever holds an order-service key, and
// the worker calls it for 3 days from inside the merchant's network: without this, that key reaches
// the cloud metadata service (instance credentials), the host's own ports and the private network.
// Shared by registration (client/webhookEndpoints.ts) and delivery (activities/events.ts), so both
// judge an address the same way. Ranges live in node:net BlockLists, never in hand-written bit math.
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { promises as dns } from 'node:dns';
import { readVariable } from './settings/read.js';

export const ALLOW_LOOPBACK_ENV = 'AUTHCAP_WEBHOOK_ALLOW_LOOPBACK' as const;
export const ALLOW_PRIVATE_ENV = 'AUTHCAP_WEBHOOK_ALLOW_PRIVATE' as const;

export interface WebhookAddressPolicy {
  /** 127.0.0.0/8 and ::1: receivers on the same host (the dev stack, tests). */
  allowLoopback: boolean;
  /** RFC 1918, CGNAT 100.64.0.0/10 and fc00::/7: receivers inside the operator's own network. */
  allowPrivate: boolean;
}

/** The policy of a process's settings (the worker's: its deliveries; the API's and CLI's: registration). */
export function webhookAddressPolicyOf(settings: { [ALLOW_LOOPBACK_ENV]: boolean; [ALLOW_PRIVATE_ENV]: boolean }): WebhookAddressPolicy {
  return { allowLoopback: settings[ALLOW_LOOPBACK_ENV], allowPrivate: settings[ALLOW_PRIVATE_ENV] };
}

/** webhookAddressPolicyOf from `env` through the catalog's rules, so a worker and an API started with the same environment agree. */
export function webhookAddressPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookAddressPolicy {
  return webhookAddressPolicyOf({ [ALLOW_LOOPBACK_ENV]: readVariable(ALLOW_LOOPBACK_ENV, env), [ALLOW_PRIVATE_ENV]: readVariable(ALLOW_PRIVATE_ENV, env) });
}

export type AddressClass = 'public' | 'metadata' | 'link-local' | 'loopback' | 'unspecified' | 'private' | 'multicast' | 'reserved';

const DESCRIPTIONS: Record<Exclude<AddressClass, 'public'>, string> = {
  metadata: 'a cloud metadata service address',
  'link-local': 'a link-local address',
  loopback: 'a loopback address',
  unspecified: 'the unspecified address (it reaches this host)',
  private: 'a private-network address',
  multicast: 'a multicast address',
  reserved: 'a reserved or special-purpose address',
};

// IPv6 spellings that carry an IPv4 address in their last 32 bits and reach it: IPv4-mapped, SIIT,
// NAT64 and the deprecated IPv4-compatible form. A refused IPv4 range is refused in each of them.
const EMBEDDING_PREFIXES = ['::ffff:', '::ffff:0:', '64:ff9b::', '::'];

// First match wins: metadata and link-local before anything an operator may allow, loopback before
// the IPv4-compatible mirror of 0.0.0.0/8 (which would otherwise swallow ::1).
const RULES: [Exclude<AddressClass, 'public'>, v4: string[], v6: string[]][] = [
  [
    'metadata',
    // AWS/GCP/Azure/OCI IMDS, ECS task metadata, Alibaba, Azure WireServer, Oracle Cloud's older metadata address.
    ['169.254.169.254/32', '169.254.170.2/32', '100.100.100.200/32', '168.63.129.16/32', '192.0.0.192/32'],
    ['fd00:ec2::254/128', 'fd20:ce::254/128'],
  ],
  ['link-local', ['169.254.0.0/16'], ['fe80::/10']],
  ['loopback', ['127.0.0.0/8'], ['::1/128']],
  ['unspecified', ['0.0.0.0/8'], ['::/128']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'], ['fc00::/7']],
  ['multicast', ['224.0.0.0/4'], ['ff00::/8']],
  [
    'reserved',
    ['192.0.0.0/24', '192.0.2.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '240.0.0.0/4'],
    // Discard, IETF protocol space (Teredo), documentation, 6to4 (relays to any IPv4), local NAT64,
    // and what is left of the IPv4-compatible block.
    ['100::/64', '2001::/23', '2001:db8::/32', '2002::/16', '3fff::/20', '64:ff9b:1::/48', '::/96'],
  ],
];

function subnet(cidr: string): [string, number] {
  const [address, prefix] = cidr.split('/');
  return [address!, Number(prefix)];
}

const CLASSES: [Exclude<AddressClass, 'public'>, BlockList][] = RULES.map(([name, v4, v6]) => {
  const list = new BlockList();
  for (const cidr of v4) {
    const [address, prefix] = subnet(cidr);
    list.addSubnet(address, prefix, 'ipv4');
    for (const embedding of EMBEDDING_PREFIXES) list.addSubnet(`${embedding}${address}`, 96 + prefix, 'ipv6');
  }
  for (const cidr of v6) list.addSubnet(...subnet(cidr), 'ipv6');
  return [name, list];
});

/** Global unicast, plus the embeddings whose IPv4 part passed the rules above. */
const GLOBAL_V6 = new BlockList();
for (const cidr of ['2000::/3', '::ffff:0:0/96', '::ffff:0:0:0/96', '64:ff9b::/96']) GLOBAL_V6.addSubnet(...subnet(cidr), 'ipv6');

/** The class of an IP address (IPv6 without brackets). */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 0) throw new TypeError(`not an IP address: ${address}`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [name, list] of CLASSES) if (list.check(address, type)) return name;
  return family === 6 && !GLOBAL_V6.check(address, 'ipv6') ? 'reserved' : 'public';
}

export function addressAllowed(kind: AddressClass, policy: WebhookAddressPolicy): boolean {
  if (kind === 'public') return true;
  if (kind === 'loopback') return policy.allowLoopback;
  if (kind === 'private') return policy.allowPrivate;
  return false;
}

/** Why a destination is refused: the host, the address it came to, and a sentence naming the reason. */
export interface AddressRefusal {
  host: string;
  address?: string;
  kind: Exclude<AddressClass, 'public'> | 'metadata-host' | 'unresolvable';
  message: string;
}

function refusal(host: string, address: string, kind: Exclude<AddressClass, 'public'>): AddressRefusal {
  const via = host === address ? address : `${host} resolves to ${address}, which`;
  const hint =
    kind === 'loopback'
      ? ` (an operator may allow loopback receivers with ${ALLOW_LOOPBACK_ENV}=1)`
      : kind === 'private'
        ? ` (an operator may allow private receivers with ${ALLOW_PRIVATE_ENV}=1)`
        : '';
  return { host, address, kind, message: `${via} is ${DESCRIPTIONS[kind]}${hint}` };
}

export function refusalForAddress(host: string, address: string, policy: WebhookAddressPolicy): AddressRefusal | undefined {
  const kind = classifyAddress(address);
  return addressAllowed(kind, policy) ? undefined : refusal(host, address, kind as Exclude<AddressClass, 'public'>);
}

// Names that reach a metadata service without a metadata address showing up in our own resolution
// (split-horizon DNS inside the cloud): refused by name before any lookup.
const METADATA_HOSTS = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
]);

/** The URL's host as the WHATWG parser left it (IPv4 forms like 2130706433 already dotted), without brackets or trailing dots. */
export function bareHost(url: URL): string {
  return url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '')
    .toLowerCase();
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

const LOOKUP_TIMEOUT_MS = 5_000;

/** Every address the system resolver (getaddrinfo: /etc/hosts, then DNS) gives: what a connection would use. */
export const systemResolver: Resolver = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`resolving ${host} took over ${LOOKUP_TIMEOUT_MS} ms`), { code: 'ETIMEOUT' })), LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([dns.lookup(host, { all: true, verbatim: true }), timeout]);
  } finally {
    clearTimeout(timer);
  }
};

function refusalForName(host: string, policy: WebhookAddressPolicy): AddressRefusal | undefined {
  if (METADATA_HOSTS.has(host)) return { host, kind: 'metadata-host', message: `${host} is a cloud metadata service name` };
  // RFC 6761: localhost names are loopback whatever a resolver says.
  if ((host === 'localhost' || host.endsWith('.localhost')) && !policy.allowLoopback) return refusal(host, '127.0.0.1', 'loopback');
  return undefined;
}

/**
 * Checks a URL's host and every address it resolves to now. An IP literal is judged as written (after
 * the WHATWG normalisation); a name must resolve, and every one of its addresses must be allowed,
 * since a connection may use any of them.
 */
export async function checkDestination(url: URL, policy: WebhookAddressPolicy, resolve: Resolver = systemResolver): Promise<AddressRefusal | undefined> {
  const host = bareHost(url);
  if (isIP(host)) return refusalForAddress(host, host, policy);
  const byName = refusalForName(host, policy);
  if (byName) return byName;
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    return { host, kind: 'unresolvable', message: `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  if (addresses.length === 0) return { host, kind: 'unresolvable', message: `${host} resolves to no address` };
  for (const { address } of addresses) {
    const refused = refusalForAddress(host, address, policy);
    if (refused) return refused;
  }
  return undefined;
}

/** What a connection attempt fails with when its host resolves to a refused address. */
export class AddressNotAllowedError extends Error {
  override readonly name = 'AddressNotAllowedError';
  readonly code = 'EADDRNOTALLOWED';
  constructor(readonly refusal: AddressRefusal) {
    super(refusal.message);
  }
}

/**
 * A `lookup` for net/http/https: resolves, checks every address, and hands the socket only checked
 * addresses, so a name cannot pass the check with one answer and connect with another (DNS rebinding).
 * IP literals never reach a lookup: check them with checkDestination first.
 */
export function guardedLookup(policy: WebhookAddressPolicy, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    const host = hostname.replace(/\.+$/, '').toLowerCase();
    const byName = refusalForName(host, policy);
    if (byName) return void callback(new AddressNotAllowedError(byName), '', 0);
    resolve(hostname).then(
      (all) => {
        for (const { address } of all) {
          const refused = refusalForAddress(host, address, policy);
          if (refused) return callback(new AddressNotAllowedError(refused), '', 0);
        }
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return callback(null, wanted);
        return callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
