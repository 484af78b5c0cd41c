import ipaddr from 'ipaddr.js';

/** Canonical text of a peer address: IPv4-mapped IPv6 becomes plain IPv4, IPv6 is compacted. */
export function normaliseIp(addr: string): string {
  if (addr === '') return addr;
  try {
    return ipaddr.process(addr).toString();
  } catch {
    return addr;
  }
}
