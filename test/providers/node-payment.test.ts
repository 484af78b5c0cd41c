import { describe, expect, it } from 'vitest';
import { promptTokensUpperBound } from '../../core/metering/prompt-bound.js';
import { ChangeCommentFilter, NodePayment, nodeCallBoundMsat } from '../../core/providers/node-payment.js';
import { parseProvidersFile } from '../../core/providers/providers.js';

/** The pieces of paying a `"payment": "cashu"` node that need no network (the chained gateways are in
 *  test/network/pay-nodes.test.ts). */

const DEFAULTS = { timeoutMs: 1000, maxConnections: 4 };

describe('providers file: "payment"', () => {
  const file = (entry: object) =>
    parseProvidersFile(
      JSON.stringify({ providers: [{ name: 'n', base_url: 'http://node/v1', ...entry }] }),
      {},
      DEFAULTS,
    );

  it('"cashu" needs no key; "api_key" is the default', () => {
    expect(file({ payment: 'cashu' }).providers[0]!.payment).toBe('cashu');
    expect(file({ payment: 'api_key', api_key: 'k' }).providers[0]!.payment).toBeUndefined();
  });

  it('refuses a key on a cashu node, the anthropic API, and unknown values', () => {
    expect(() => file({ payment: 'cashu', api_key: 'k' })).toThrow(/paid with eCash; give it no "api_key"/);
    expect(() => file({ payment: 'cashu', api: 'anthropic' })).toThrow(/openai/);
    expect(() => file({ payment: 'lightning' })).toThrow(
      /"payment" must be "api_key" \(the default\) or "cashu"/,
    );
  });
});

describe('the node call bound', () => {
  const price = {
    promptMsatPer1k: 2110.5,
    completionMsatPer1k: 4221,
    requestMsat: 1000,
    contextLength: 8192,
  };
  const body = { model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 5 };
  const raw = JSON.stringify(body).length;

  it('prompt bound + max_tokens at the node rates + its request price, rounded up', () => {
    const pb = promptTokensUpperBound(body, raw);
    expect(
      nodeCallBoundMsat(price, {
        requestId: 'r',
        model: 'm',
        path: '/v1/chat/completions',
        body,
        rawBytes: raw,
      }),
    ).toBe(Math.ceil(1000 + (pb * 2110.5) / 1000 + (5 * 4221) / 1000));
  });

  it('no max_tokens: the whole context window (the real prompt may be far below its bound); unknown → refused, not guessed', () => {
    const { max_tokens: _, ...open } = body;
    const pb = promptTokensUpperBound(open, raw);
    const call = { requestId: 'r', model: 'm', path: '/v1/chat/completions', body: open, rawBytes: raw };
    expect(nodeCallBoundMsat(price, call)).toBe(
      Math.ceil(1000 + (pb * 2110.5) / 1000 + (8192 * 4221) / 1000),
    );
    expect(() => nodeCallBoundMsat({ ...price, contextLength: undefined }, call)).toThrow(/set max_tokens/);
  });

  it('several max-tokens fields: the largest bounds the call (the node may read any)', () => {
    const both = { ...body, max_tokens: 5, max_completion_tokens: 900, max_output_tokens: 7 };
    const n = JSON.stringify(both).length;
    const pb = promptTokensUpperBound(both, n);
    const call = { requestId: 'r', model: 'm', path: '/v1/chat/completions', body: both, rawBytes: n };
    expect(nodeCallBoundMsat(price, call)).toBe(Math.ceil(1000 + (pb * 2110.5) / 1000 + (900 * 4221) / 1000));
  });

  it('a flat-priced path is its request price', () => {
    expect(
      nodeCallBoundMsat(price, {
        requestId: 'r',
        model: 'm',
        path: '/v1/images/generations',
        body,
        rawBytes: raw,
      }),
    ).toBe(1000);
  });
});

describe('refusal', () => {
  it('402 always; another 4xx only when the node returned no token (it never took ours)', () => {
    expect(NodePayment.refused({ status: 402, headers: { 'x-cashu': 'cashuBxyz' } })).toBe(true);
    expect(NodePayment.refused({ status: 400, headers: {} })).toBe(true);
    expect(NodePayment.refused({ status: 400, headers: { 'x-cashu': 'cashuBxyz' } })).toBe(false);
    expect(NodePayment.refused({ status: 429, headers: {} })).toBe(false);
    expect(NodePayment.refused({ status: 200, headers: {} })).toBe(false);
  });
});

describe('ChangeCommentFilter', () => {
  const stream =
    'data: {"a":1}\n\n: keep-alive\n\ndata: {"b":":x"}\n\n: x-node-cost {"msats":1000}\n\n: x-cashu cashuBchange123\n\ndata: [DONE]\n\n';
  const expected = 'data: {"a":1}\n\n: keep-alive\n\ndata: {"b":":x"}\n\ndata: [DONE]\n\n';

  it('removes the change and node-cost comments (and their blank lines) however the body is split, passing all else through', () => {
    for (let size = 1; size <= stream.length; size++) {
      const f = new ChangeCommentFilter();
      let out = '';
      for (let i = 0; i < stream.length; i += size)
        out += f.push(Buffer.from(stream.slice(i, i + size))).toString();
      out += f.end()?.toString() ?? '';
      expect(out, `chunks of ${size}`).toBe(expected);
      expect(f.change).toBe('cashuBchange123');
      expect(f.pending).toBeUndefined();
    }
  });

  it('a pending-change comment is taken out and its amount kept', () => {
    const f = new ChangeCommentFilter();
    const out = f.push(
      Buffer.from(
        'data: x\n\n: x-cashu-change pending;msat=1500;claim="POST /v1/balance/refund"\n\ndata: [DONE]\n\n',
      ),
    );
    expect(out.toString()).toBe('data: x\n\ndata: [DONE]\n\n');
    expect(f.pending).toBe(1500);
    expect(f.change).toBeUndefined();
  });
});
