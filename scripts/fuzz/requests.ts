import { gzipSync } from 'node:zlib';
import { getEncodedToken, type Proof } from '@cashu/cashu-ts';
import fc from 'fast-check';
import { HTTP_METHODS, loadOpenApiDocument } from '../../core/openapi/document.js';
import { encodeTokenV3 } from '../../core/wallet/token-codec.js';
import { schemaArbitrary } from './schema-arbitrary.js';

/**
 * The fuzzer's requests. fast-check generates a PLAN (which operation, which credential and how it is
 * mutated, which body and how it is broken, how the message is framed and segmented); `renderRequest` turns
 * a plan into the bytes on the wire using the run's live material (a funded API key, fresh eCash tokens).
 * Plans are what a seed replays: the same seed gives the same shapes of request against fresh material.
 */

export interface Operation {
  method: string;
  path: string;
  bodySchema: unknown;
}

/** Every documented operation, plus a body schema where it takes JSON. */
export function documentedOperations(): Operation[] {
  const doc = loadOpenApiDocument();
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method] as
        | { requestBody?: { content?: Record<string, { schema?: unknown }> } }
        | undefined;
      if (op === undefined) continue;
      ops.push({
        method: method.toUpperCase(),
        path,
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return ops;
}

export interface TokenMaterial {
  mint: string;
  proofs: Proof[];
}

/** Live material the plans draw on: known to the fuzzer so it can check none of it is echoed. */
export interface FuzzMaterial {
  apiKey: string;
  tokens: TokenMaterial[];
  host: string;
}

const CREDENTIALS = ['none', 'key', 'key-near', 'bearer-token', 'x-cashu', 'query-key'] as const;
const TOKEN_MUTATIONS = [
  'none',
  'truncate',
  'v3',
  'dup-proofs',
  'overflow-amount',
  'foreign-keyset',
  'bad-secret',
  'other-mint',
  'garbage',
] as const;
const BODIES = [
  'schema',
  'schema',
  'schema',
  'random-json',
  'deep',
  'huge-number',
  'wrong-type',
  'invalid-utf8',
  'truncated',
  'empty',
  'gzip',
] as const;
const FRAMINGS = [
  'cl',
  'cl',
  'cl',
  'cl-short',
  'cl-dup',
  'cl-te',
  'chunked',
  'te-list',
  'te-unknown',
] as const;
const HEADER_TRICKS = [
  'none',
  'none',
  'none',
  'huge-value',
  'dup-host',
  'no-host',
  'dup-auth',
  'bare-cr',
  'non-ascii',
  'obs-fold',
  'many',
  'space-before-colon',
] as const;
const WEIRD_METHODS = [
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'HEAD',
  'OPTIONS',
  'PROPFIND',
  'TRACE',
] as const;
const PATH_TRICKS = [
  'none',
  'none',
  'none',
  'dot-segment',
  'encoded-dot',
  'encoded-slash',
  'long',
  'absolute-form',
] as const;

export interface FuzzPlan {
  op: number;
  method: string | undefined;
  pathParam: string;
  pathTrick: (typeof PATH_TRICKS)[number];
  credential: (typeof CREDENTIALS)[number];
  tokenIndex: number;
  tokenMutation: (typeof TOKEN_MUTATIONS)[number];
  keyMutationAt: number;
  bodyKind: (typeof BODIES)[number];
  body: unknown;
  breakAt: number;
  framing: (typeof FRAMINGS)[number];
  headerTrick: (typeof HEADER_TRICKS)[number];
  segments: number;
}

/**
 * Plan shapes the opt-in uWS engine's C++ parser drops before any JavaScript runs (the README's "HTTP engines"
 * list): not generated against uWS, so its runs check everything else. Each limit is one field's values.
 */
export const UWS_LIMITS: Required<PlanLimits> = {
  headerTrick: ['no-host', 'obs-fold', 'bare-cr', 'space-before-colon', 'many', 'huge-value', 'non-ascii'],
  pathTrick: ['absolute-form', 'long'],
  framing: ['cl-te', 'te-unknown', 'chunked', 'te-list'],
  method: ['PROPFIND', 'TRACE', 'HEAD'],
};

/** Values of a plan's fields that a run does not generate. */
export interface PlanLimits {
  headerTrick?: readonly FuzzPlan['headerTrick'][];
  pathTrick?: readonly FuzzPlan['pathTrick'][];
  framing?: readonly FuzzPlan['framing'][];
  method?: readonly string[];
}

export function uwsKnownLimit(p: FuzzPlan): boolean {
  return (
    UWS_LIMITS.headerTrick.includes(p.headerTrick) ||
    UWS_LIMITS.pathTrick.includes(p.pathTrick) ||
    UWS_LIMITS.framing.includes(p.framing) ||
    UWS_LIMITS.method.includes(p.method ?? '')
  );
}

/**
 * The generator of request plans: an operation, then every other field drawn independently. With `limits`,
 * the limited values are left out of their fields' choices (the same plans as generating all and dropping
 * the limited ones, without drawing the 9 in 10 that a uWS run would drop). The per-field generators are
 * built once: only the body depends on the operation.
 */
export function planArbitrary(ops: Operation[], limits: PlanLimits = {}): fc.Arbitrary<FuzzPlan> {
  const components = (loadOpenApiDocument().components?.schemas ?? {}) as Record<string, unknown>;
  const bodyByOp = ops.map((o) =>
    o.bodySchema === undefined ? fc.jsonValue({ maxDepth: 2 }) : schemaArbitrary(o.bodySchema, components),
  );
  const without = <T>(all: readonly T[], out: readonly T[] | undefined): T[] => {
    const kept = all.filter((v) => !(out ?? []).includes(v));
    if (kept.length === 0) throw new Error('the plan limits leave a field without values');
    return kept;
  };
  const fields = {
    method: fc.option(fc.constantFrom(...without<string>(WEIRD_METHODS, limits.method)), {
      freq: 8,
      nil: undefined,
    }),
    pathParam: fc.oneof(fc.stringMatching(/^[a-z0-9_-]{1,12}$/), fc.string({ maxLength: 12 })),
    pathTrick: fc.constantFrom(...without(PATH_TRICKS, limits.pathTrick)),
    credential: fc.constantFrom(...CREDENTIALS),
    tokenIndex: fc.nat(),
    tokenMutation: fc.constantFrom(...TOKEN_MUTATIONS),
    keyMutationAt: fc.nat({ max: 60 }),
    bodyKind: fc.constantFrom(...BODIES),
    breakAt: fc.double({ min: 0, max: 1, noNaN: true }),
    framing: fc.constantFrom(...without(FRAMINGS, limits.framing)),
    headerTrick: fc.constantFrom(...without(HEADER_TRICKS, limits.headerTrick)),
    segments: fc.constantFrom(1, 1, 2, 7, 40),
  };
  return fc
    .integer({ min: 0, max: ops.length - 1 })
    .chain((op) => fc.record({ op: fc.constant(op), body: bodyByOp[op]!, ...fields }));
}

export interface RenderedRequest {
  bytes: Buffer;
  segments: number;
  /** A one-line description for failure reports (never contains credentials). */
  label: string;
  /** Credentials this request carried (they must not come back in an error answer, or in logs). */
  credentials: string[];
  /** False when the request is deliberately incomplete (the server may just close). */
  expectAnswer: boolean;
}

export function renderRequest(plan: FuzzPlan, ops: Operation[], m: FuzzMaterial): RenderedRequest {
  const op = ops[plan.op]!;
  const method = plan.method ?? op.method;
  const path = renderPath(op.path, plan);
  const headers: [string, string][] = [];
  const credentials: string[] = [];
  let query = '';

  const token =
    m.tokens.length > 0 ? renderToken(m.tokens[plan.tokenIndex % m.tokens.length]!, plan) : 'cashuBx';
  switch (plan.credential) {
    case 'key':
      headers.push(['Authorization', `Bearer ${m.apiKey}`]);
      credentials.push(m.apiKey);
      break;
    case 'key-near': {
      const k = mutateKey(m.apiKey, plan.keyMutationAt);
      headers.push(['Authorization', `Bearer ${k}`]);
      break;
    }
    case 'bearer-token':
      headers.push(['Authorization', `Bearer ${token}`]);
      credentials.push(token);
      break;
    case 'x-cashu':
      headers.push(['X-Cashu', token]);
      credentials.push(token);
      break;
    case 'query-key':
      query = `?api_key=${encodeURIComponent(m.apiKey)}`;
      credentials.push(m.apiKey);
      break;
    case 'none':
      break;
  }

  let body = renderBody(plan);
  let contentType = 'application/json';
  if (plan.bodyKind === 'gzip') headers.push(['Content-Encoding', 'gzip']);
  if (plan.bodyKind === 'invalid-utf8') contentType = 'application/json; charset=utf-8';
  const hasBody = body.length > 0 || method === 'POST' || method === 'PUT' || method === 'PATCH';
  if (hasBody) headers.push(['Content-Type', contentType]);

  let expectAnswer = true;
  let framing: [string, string][] = [];
  if (hasBody) {
    switch (plan.framing) {
      case 'cl':
        framing = [['Content-Length', String(body.length)]];
        break;
      case 'cl-short':
        // Announces more than it sends: the server waits for the rest, then sees the connection end.
        framing = [['Content-Length', String(body.length + 10)]];
        expectAnswer = false;
        break;
      case 'cl-dup':
        framing = [
          ['Content-Length', String(body.length)],
          ['Content-Length', String(body.length + 1)],
        ];
        break;
      case 'cl-te':
        framing = [
          ['Content-Length', String(body.length)],
          ['Transfer-Encoding', 'chunked'],
        ];
        body = chunked(body);
        break;
      case 'chunked':
        framing = [['Transfer-Encoding', 'chunked']];
        body = chunked(body);
        break;
      case 'te-list':
        framing = [['Transfer-Encoding', 'chunked, identity']];
        body = chunked(body);
        break;
      case 'te-unknown':
        framing = [['Transfer-Encoding', 'gzip']];
        break;
    }
  }
  headers.push(...framing);

  const host: [string, string] = ['Host', m.host];
  switch (plan.headerTrick) {
    case 'huge-value':
      headers.push(['X-Fuzz', 'a'.repeat(100_000)]);
      break;
    case 'dup-host':
      headers.push(['Host', 'evil.example']);
      break;
    case 'dup-auth':
      headers.push(['Authorization', 'Bearer sk-duplicate']);
      break;
    case 'bare-cr':
      headers.push(['X-Fuzz', 'a\rb']);
      break;
    case 'non-ascii':
      headers.push(['X-Fuzz', 'caf\u00e9 \u00ff\u0080']);
      break;
    case 'obs-fold':
      headers.push(['X-Fuzz', 'first\r\n  folded']);
      break;
    case 'many':
      for (let i = 0; i < 60; i++) headers.push([`X-Fuzz-${i}`, String(i)]);
      break;
    case 'space-before-colon':
      headers.push(['X-Fuzz ', 'x']);
      break;
    default:
      break;
  }
  const lines = [
    `${method} ${plan.pathTrick === 'absolute-form' ? `http://${m.host}` : ''}${path}${query} HTTP/1.1`,
  ];
  if (plan.headerTrick !== 'no-host') lines.push(`${host[0]}: ${host[1]}`);
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  lines.push('Connection: close');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  const label = [
    method,
    path.length > 80 ? `${path.slice(0, 80)}…` : path,
    `cred=${plan.credential}/${plan.tokenMutation}`,
    `body=${plan.bodyKind}`,
    `framing=${hasBody ? plan.framing : 'none'}`,
    `headers=${plan.headerTrick}`,
    `segments=${plan.segments}`,
  ].join(' ');
  return { bytes: Buffer.concat([head, body]), segments: plan.segments, label, credentials, expectAnswer };
}

function renderPath(template: string, plan: FuzzPlan): string {
  let p = template.replace(/\{[^}]+\}/g, () => encodeURIComponent(plan.pathParam) || 'x');
  switch (plan.pathTrick) {
    case 'dot-segment':
      p = `/v1/../admin/api/settings`;
      break;
    case 'encoded-dot':
      p = `/v1/%2e%2e/admin/api/settings`;
      break;
    case 'encoded-slash':
      p = `/v1/..%2f..%2fsecret`;
      break;
    case 'long':
      p = `${p}/${'x'.repeat(4000)}`;
      break;
    default:
      break;
  }
  return p;
}

function renderBody(plan: FuzzPlan): Buffer {
  const json = () => Buffer.from(JSON.stringify(plan.body ?? null));
  switch (plan.bodyKind) {
    case 'schema':
      return json();
    case 'random-json':
      return Buffer.from(JSON.stringify({ x: plan.pathParam, n: plan.keyMutationAt, v: plan.body }));
    case 'deep':
      return Buffer.from(`${'['.repeat(10_000)}${']'.repeat(10_000)}`);
    case 'huge-number':
      return Buffer.from(
        withEveryNumber(
          JSON.stringify(plan.body ?? {}),
          ['1e19', '1e400', '-1', '9007199254740993', '-0'][plan.keyMutationAt % 5]!,
        ),
      );
    case 'wrong-type':
      return Buffer.from(JSON.stringify(wrongTypes(plan.body)));
    case 'invalid-utf8': {
      const b = json();
      const at = Math.floor(plan.breakAt * b.length);
      return Buffer.concat([b.subarray(0, at), Buffer.from([0xff, 0xfe, 0xc3]), b.subarray(at)]);
    }
    case 'truncated': {
      const b = json();
      return b.subarray(0, Math.floor(plan.breakAt * b.length));
    }
    case 'empty':
      return Buffer.alloc(0);
    case 'gzip':
      return plan.breakAt < 0.5 ? gzipSync(json()) : Buffer.from('not gzip at all');
  }
}

/** Every bare number in a JSON text replaced by `n`. */
function withEveryNumber(text: string, n: string): string {
  return text.replace(/(?<=[:[,])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[,\]}])/g, n);
}

function wrongTypes(v: unknown): unknown {
  if (Array.isArray(v)) return { not: 'an array' };
  if (v === null || typeof v !== 'object') return [v];
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] =
      typeof x === 'string'
        ? 12345
        : typeof x === 'number'
          ? 'a string'
          : typeof x === 'boolean'
            ? 'true'
            : 'x';
  }
  return out;
}

function chunked(body: Buffer): Buffer {
  if (body.length === 0) return Buffer.from('0\r\n\r\n');
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
}

function mutateKey(key: string, at: number): string {
  const i = at % key.length;
  switch (at % 3) {
    case 0: {
      const c = key[i] === 'a' ? 'b' : 'a';
      return key.slice(0, i) + c + key.slice(i + 1);
    }
    case 1:
      return key.slice(0, Math.max(3, i));
    default:
      return `${key}x`;
  }
}

function renderToken(t: TokenMaterial, plan: FuzzPlan): string {
  const proofs = t.proofs.map((p) => ({ ...p }));
  const encode = (mint: string, ps: Proof[]) => getEncodedToken({ mint, proofs: ps, unit: 'sat' });
  switch (plan.tokenMutation) {
    case 'none':
      return encode(t.mint, proofs);
    case 'truncate': {
      const s = encode(t.mint, proofs);
      return s.slice(0, Math.max(7, Math.floor(s.length * plan.breakAt)));
    }
    case 'v3':
      return encodeTokenV3({ mint: t.mint, unit: 'sat', proofs });
    case 'dup-proofs':
      return encode(t.mint, [...proofs, ...proofs]);
    case 'overflow-amount':
      // Hand-built v3 JSON: no encoder accepts an amount past 2^53, which is the point.
      return `cashuA${Buffer.from(
        JSON.stringify({
          token: [
            {
              mint: t.mint,
              proofs: proofs.map((p, i) => ({
                id: p.id,
                amount: i === 0 ? 2 ** 63 : Number(p.amount.toBigInt()),
                secret: p.secret,
                C: p.C,
              })),
            },
          ],
          unit: 'sat',
        }),
      ).toString('base64url')}`;
    case 'foreign-keyset':
      return encodeTokenV3({
        mint: t.mint,
        unit: 'sat',
        proofs: proofs.map((p) => ({ ...p, id: '00ffffffffffffff' })),
      });
    case 'bad-secret':
      return encode(
        t.mint,
        proofs.map((p) => ({ ...p, secret: `${p.secret.slice(0, -2)}00` })),
      );
    case 'other-mint':
      return encodeTokenV3({ mint: 'https://mint.example.invalid', unit: 'sat', proofs });
    case 'garbage':
      return `cashuB${Buffer.from(plan.pathParam).toString('base64url')}`;
  }
}
