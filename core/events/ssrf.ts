import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';

/**
 * SSRF guard for webhook URLs (docs/webhooks.md). A URL must be http(s) and its host must resolve ONLY to
 * public unicast addresses: loopback, private, link-local (169.254/16 incl. cloud metadata), carrier-grade NAT,
 * unique-local, multicast, unspecified, reserved, NAT64/6to4/Teredo and IPv4-mapped forms (checked as the IPv4
 * address they carry) are refused. Checked at registration and again at every delivery: the delivery agent's
 * DNS lookup refuses a private answer and connects to the very address it checked (no DNS rebinding window).
 * `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS) turns the address check off; the scheme check stays.
 */

export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError';
}

/** True when `ip` is a public unicast address. */
export function isPublicAddress(ip: string): boolean {
  const t = ip.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(t)) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(t);
  } catch {
    return false;
  }
  return addr.range() === 'unicast';
}

/** Parses and checks the scheme; throws UnsafeUrlError. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UnsafeUrlError('only http and https URLs are accepted');
  }
  if (url.username !== '' || url.password !== '')
    throw new UnsafeUrlError('URLs with credentials are refused');
  return url;
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  );
}

/** The addresses `host` resolves to, all checked; throws UnsafeUrlError when any one is not public. */
export async function checkedAddresses(host: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  const h = host.replace(/^\[|\]$/g, '');
  let addrs: LookupAddress[];
  if (isIP(h) !== 0) addrs = [{ address: h, family: isIP(h) }];
  else {
    try {
      addrs = await resolveAll(h);
    } catch (err) {
      throw new UnsafeUrlError(`host does not resolve: ${(err as Error).message}`);
    }
  }
  if (addrs.length === 0) throw new UnsafeUrlError('host does not resolve');
  if (!allowPrivate) {
    const bad = addrs.find((a) => !isPublicAddress(a.address));
    if (bad) throw new UnsafeUrlError(`host resolves to a non-public address (${bad.address})`);
  }
  return addrs;
}

/** Registration check: the scheme and every resolved address. */
export async function assertSafeWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = parseWebhookUrl(raw);
  await checkedAddresses(url.hostname, allowPrivate);
  return url;
}

/**
 * An undici dispatcher whose connections go only to addresses the guard accepted (the lookup result is what
 * the socket connects to).
 */
export function guardedAgent(allowPrivate: boolean, timeoutMs: number): Agent {
  return new Agent({
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: {
      lookup(hostname, options, callback) {
        checkedAddresses(hostname, allowPrivate).then(
          (addrs) => {
            const opts = options as { all?: boolean };
            if (opts.all) (callback as (e: null, a: LookupAddress[]) => void)(null, addrs);
            else callback(null, addrs[0]!.address, addrs[0]!.family);
          },
          (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
        );
      },
    },
  });
}

/** `https://host:port` of a URL (never its path or query), or null when it is not a URL. */
export function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
