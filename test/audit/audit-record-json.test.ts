import { describe, expect, it } from 'vitest';
import { callAuditRecord } from '../../core/audit/audit-log.js';
import type { AuditInput } from '../../core/audit/types.js';
import { keyIdOf, sha256Hex } from '../../core/ledger/keys.js';

/**
 * The call's audit record is written as JSON text directly (core/audit/audit-log.ts, a paid-path cut): the
 * text must be exactly what JSON.stringify of the record gives, whatever the client sent in its strings.
 */
const apiKey = `sk-${'a1B2c3D4e5'}${'x'.repeat(19)}`;
const input = (o: Partial<AuditInput> = {}): AuditInput => ({
  atMs: Date.UTC(2026, 10, 27, 13, 0, 0, 123),
  requestId: 'req_1',
  subject: { credential: { apiKey } },
  endpoint: '/v1/chat/completions',
  method: 'POST',
  ip: '127.0.0.1',
  userAgent: 'openai-node/6',
  costMsat: 5,
  status: 200,
  ...o,
});
const expected = (i: AuditInput) =>
  JSON.stringify({
    timestamp: new Date(i.atMs).toISOString(),
    request_id: i.requestId,
    api_key_id: keyIdOf(sha256Hex(apiKey)),
    endpoint: i.endpoint,
    method: i.method,
    ip_address: i.ip,
    user_agent: i.userAgent === undefined ? null : i.userAgent.slice(0, 256),
    response_status: i.status,
    kind: i.subject.admin ? 'admin' : 'key',
  });

describe('the call audit record as JSON text', () => {
  it.each([
    ['plain', input()],
    ['no user agent', input({ userAgent: undefined })],
    [
      'hostile strings',
      input({ userAgent: 'a"b\\c\n\u0000\u2028\ud800 ☃', endpoint: '/v1/x"y', requestId: 'r"\\' }),
    ],
    ['a user agent cut at 256', input({ userAgent: 'u'.repeat(400) })],
    ['another millisecond', input({ atMs: Date.UTC(2027, 0, 1) })],
    ['an admin subject', input({ subject: { credential: { apiKey }, admin: true }, status: 403 })],
  ])('%s: the same text as JSON.stringify of the record', (_n, i) => {
    const r = callAuditRecord(i);
    expect(r?.json).toBe(expected(i));
    expect(r).toMatchObject({ atMs: i.atMs, status: i.status });
    expect(JSON.parse(r?.json ?? '')).toMatchObject({ request_id: i.requestId });
  });

  it('none for an unknown key, a malformed credential or no credential', () => {
    expect(callAuditRecord(input({ subject: { credential: { apiKey }, unknown: true } }))).toBeUndefined();
    expect(callAuditRecord(input({ subject: { credential: { apiKey: 'sk-short' } } }))).toBeUndefined();
    expect(callAuditRecord(input({ subject: {} }))).toBeUndefined();
  });
});
