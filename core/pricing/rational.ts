/**
 * Exact non-negative rationals on BigInt, just enough for pricing: decimal strings in, one rounding out.
 * Money never goes through a float: a rate like "0.0000025" or a fee like 1.005 is parsed digit by digit.
 */

import type { Rational } from './types.js';

// The type is in ./types.ts (the rate card there names it); the arithmetic is here.
export type { Rational };

export const ZERO: Rational = { n: 0n, d: 1n };

const DECIMAL = /^\+?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,3}))?$/;

/**
 * Parses a non-negative decimal ("12", "0.0000025", "1e-7", "1.5E3") or a finite non-negative number
 * exactly. For a number, its shortest round-trip string is used (String(1.005) === "1.005"), which is the
 * value the operator wrote in the environment. Throws RangeError on anything else (negative, NaN, junk).
 */
export function parseDecimal(value: string | number): Rational {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0)
      throw new RangeError(`not a non-negative finite number: ${value}`);
    value = String(value);
  }
  const m = DECIMAL.exec(value.trim());
  const int = m?.[1] ?? '';
  const frac = m?.[2] ?? '';
  if (!m || int.length + frac.length === 0 || int.length + frac.length > 60) {
    throw new RangeError(`not a non-negative decimal: ${JSON.stringify(value.slice(0, 40))}`);
  }
  const exp = Number(m[3] ?? '0') - frac.length;
  const digits = BigInt(int + frac);
  if (exp > 60 || exp < -120) throw new RangeError('decimal exponent out of range');
  return exp >= 0 ? { n: digits * 10n ** BigInt(exp), d: 1n } : reduce({ n: digits, d: 10n ** BigInt(-exp) });
}

export function fromBigInt(n: bigint): Rational {
  return { n, d: 1n };
}

export function add(a: Rational, b: Rational): Rational {
  return a.d === b.d ? { n: a.n + b.n, d: a.d } : reduce({ n: a.n * b.d + b.n * a.d, d: a.d * b.d });
}

export function sub(a: Rational, b: Rational): Rational {
  return a.d === b.d ? { n: a.n - b.n, d: a.d } : reduce({ n: a.n * b.d - b.n * a.d, d: a.d * b.d });
}

export function mul(a: Rational, b: Rational): Rational {
  return reduce({ n: a.n * b.n, d: a.d * b.d });
}

/** a / b; b must be non-zero. */
export function div(a: Rational, b: Rational): Rational {
  if (b.n === 0n) throw new RangeError('division by zero');
  const sign = b.n < 0n ? -1n : 1n;
  return reduce({ n: a.n * b.d * sign, d: a.d * b.n * sign });
}

export function mulInt(a: Rational, k: bigint | number): Rational {
  return reduce({ n: a.n * BigInt(k), d: a.d });
}

export function cmp(a: Rational, b: Rational): -1 | 0 | 1 {
  const l = a.n * b.d;
  const r = b.n * a.d;
  return l < r ? -1 : l > r ? 1 : 0;
}

export function isZero(a: Rational): boolean {
  return a.n === 0n;
}

/** Smallest integer ≥ a. */
export function ceil(a: Rational): bigint {
  const q = a.n / a.d; // truncates toward zero
  return a.n > 0n && q * a.d !== a.n ? q + 1n : q;
}

/** Largest integer ≤ a. */
export function floor(a: Rational): bigint {
  const q = a.n / a.d;
  return a.n < 0n && q * a.d !== a.n ? q - 1n : q;
}

/** Float approximation (nearest double to the decimal expansion), for display fields only. */
export function toNumber(a: Rational): number {
  return Number(toDecimalString(a));
}

/** Exact decimal string when the denominator divides a power of ten (≤ 40 digits), else 40 rounded digits. */
export function toDecimalString(a: Rational): string {
  const neg = a.n < 0n;
  let n = neg ? -a.n : a.n;
  let scale = 0;
  let pow = 1n;
  while (scale < 40 && (n * pow) % a.d !== 0n) {
    scale++;
    pow *= 10n;
  }
  n = (n * pow) / a.d;
  let s = n.toString();
  if (scale > 0) {
    s = s.padStart(scale + 1, '0');
    s = `${s.slice(0, -scale)}.${s.slice(-scale)}`.replace(/\.?0+$/, '');
  }
  return neg ? `-${s}` : s;
}

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function reduce(r: Rational): Rational {
  if (r.d === 1n) return r;
  const g = gcd(r.n, r.d);
  return g === 1n || g === 0n ? r : { n: r.n / g, d: r.d / g };
}
