import ipaddr from 'ipaddr.js';

/**
 * IP allow-lists and trusted-proxy client addresses, with ipaddr.js. Entries are single addresses or CIDR
 * ranges, IPv4 or IPv6; IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`, how dual-stack sockets report IPv4
 * peers) are matched as the IPv4 address they carry.
 */

type Addr = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Addr, number];

/** A compiled list of addresses and ranges. */
export interface IpList {
  /** True when `ip` is in one of the ranges (false for text that is not an IP address). */
  has(ip: string): boolean;
  readonly size: number;
}

/** Parses an address, unwrapping IPv4-mapped IPv6; undefined when it is not an address. */
export function parseIp(text: string): Addr | undefined {
  const t = text.trim().replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(t)) return undefined;
  try {
    return ipaddr.process(t);
  } catch {
    return undefined;
  }
}

/** One entry as a range: `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `v6/n`. Throws RangeError when invalid. */
export function parseRange(entry: string): Range {
  const e = entry.trim();
  if (e.includes('/')) {
    try {
      const [addr, bits] = ipaddr.parseCIDR(e);
      // A range written as IPv4-mapped IPv6 (::ffff:a.b.c.d/n, n ≥ 96) matches the IPv4 addresses it covers.
      if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
      }
      return [addr, bits];
    } catch {
      throw new RangeError(`not an IP range: ${e}`);
    }
  }
  const a = parseIp(e);
  if (!a) throw new RangeError(`not an IP address: ${e}`);
  return [a, a.kind() === 'ipv4' ? 32 : 128];
}

/** True when every entry is a valid address or range (for request validation). */
export function isValidIpEntry(entry: string): boolean {
  try {
    parseRange(entry);
    return true;
  } catch {
    return false;
  }
}

export function compileIpList(entries: readonly string[]): IpList {
  const ranges = entries.map(parseRange);
  return {
    size: ranges.length,
    has(ip: string): boolean {
      const a = parseIp(ip);
      if (!a) return false;
      for (const [base, bits] of ranges) {
        if (base.kind() === a.kind() && a.match(base as never, bits)) return true;
      }
      return false;
    },
  };
}

/**
 * The client address of a request: the peer, unless the peer is a trusted proxy; then the right-most
 * `X-Forwarded-For` entry that is not itself a trusted proxy (entries left of it are client-supplied and
 * could be forged). Falls back to the peer when the header is missing or malformed.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: IpList): string {
  if (trusted.size === 0 || !forwardedFor || !trusted.has(peer)) return peer;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const a = parseIp(hops[i]!);
    if (!a) return peer;
    const text = a.toString();
    if (!trusted.has(text)) return text;
  }
  return peer;
}

const compiled = new Map<string, IpList | null>();

/**
 * The compiled form of a stored list, cached by content (key allow-lists and TRUSTED_PROXIES are read on
 * every call). `null` when an entry is malformed.
 */
export function cachedIpList(entries: readonly string[]): IpList | null {
  const cacheKey = entries.join(',');
  let list = compiled.get(cacheKey);
  if (list === undefined) {
    try {
      list = compileIpList(entries);
    } catch {
      list = null;
    }
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(cacheKey, list);
  }
  return list;
}

/**
 * Whether a key's allow-list lets `ip` in: a null or empty list allows every address; a list with a
 * malformed entry allows none (a broken stored entry must not open the key to everyone).
 */
export function allowListPermits(entries: readonly string[] | null, ip: string): boolean {
  if (entries === null || entries.length === 0) return true;
  return cachedIpList(entries)?.has(ip) ?? false;
}
