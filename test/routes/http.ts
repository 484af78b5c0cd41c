import { expect } from 'vitest';

/**
 * A tiny fetch wrapper for the route tests: JSON in, `{ status, body, headers }` out. Credentials are
 * passed explicitly so each test says how it authenticates.
 */
export interface CallOptions {
  /** `Authorization: Bearer <auth>` (an sk- key or a cashu token). */
  auth?: string;
  body?: unknown;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
}

export interface CallResult<T = Record<string, unknown>> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<CallResult<T>> {
  const url = new URL(path, base);
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth !== undefined) headers.authorization = `Bearer ${opts.auth}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON (HTML, metrics text)
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

/** The `error.code` of an error envelope. */
export function errorCode(r: CallResult<unknown>): string | undefined {
  return (r.body as { error?: { code?: string } })?.error?.code;
}

/** `r` answered `status`, with a body holding at least the fields of `body`. */
export function expectAnswer(r: CallResult<unknown>, status: number, body: object): void {
  expect(r.status).toBe(status);
  expect(r.body).toMatchObject(body);
}
