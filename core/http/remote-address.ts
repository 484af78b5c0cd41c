import ipaddr from 'ipaddr.js';

/** Recently seen peer addresses → their canonical text (clients reconnect from the same few addresses). */
const seen = new Map<string, string>();
const SEEN_MAX = 1024;

/** Canonical text of a peer address: IPv4-mapped IPv6 becomes plain IPv4, IPv6 is compacted. */
export function normaliseIp(addr: string): string {
  if (addr === '') return addr;
  const known = seen.get(addr);
  if (known !== undefined) return known;
  let out: string;
  try {
    out = ipaddr.process(addr).toString();
  } catch {
    out = addr;
  }
  if (seen.size >= SEEN_MAX) seen.clear();
  seen.set(addr, out);
  return out;
}
