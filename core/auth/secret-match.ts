import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time comparison of a presented secret (admin password, METRICS_TOKEN) with the configured one:
 * SHA-256 of both first, so neither the value nor its length leaks through timing.
 */
export function secretMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** The value of cookie `name` in a Cookie header, URL-decoded; undefined when absent. */
export function cookieValue(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  const raw = headers.cookie;
  if (raw === undefined) return undefined;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const v = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(v);
    } catch {
      return v;
    }
  }
  return undefined;
}
