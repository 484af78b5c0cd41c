import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../core/errors.js';
import { getRequestValidator, listOperations, toJsonSchema } from '../../core/openapi/index.js';
import { compileRequestValidator, precompiledOperations } from '../../core/openapi/validators.js';

function validator(method: string, path: string): (body: unknown) => void {
  const v = getRequestValidator(method, path);
  if (v === undefined) throw new Error(`no validator for ${method} ${path}`);
  return v;
}

/** The GatewayError a body raises (fails the test when it raises none). */
function rejection(method: string, path: string, body: unknown): GatewayError {
  try {
    validator(method, path)(body);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error(`accepted: ${JSON.stringify(body)}`);
}

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

describe('getRequestValidator', () => {
  it('compiles a validator for every operation with a JSON body, and none for the others', () => {
    const withJson: string[] = [];
    for (const { method, path } of listOperations()) {
      if (getRequestValidator(method, path) !== undefined) withJson.push(`${method} ${path}`);
    }
    expect(withJson).toContain('post /v1/chat/completions');
    expect(withJson).toContain('post /v1/balance/child-key');
    expect(withJson).toContain('patch /admin/api/settings');
    expect(withJson).not.toContain('get /v1/models');
    expect(withJson).not.toContain('post /v1/audio/transcriptions'); // multipart: relayed as is
    expect(withJson).not.toContain('post /v1/{path}'); // catch-all: any body
    expect(withJson.length).toBeGreaterThanOrEqual(15);
  });

  it('is undefined for unknown operations and matches the method case-insensitively', () => {
    expect(getRequestValidator('POST', '/v1/nope')).toBeUndefined();
    expect(getRequestValidator('GET', '/v1/chat/completions')).toBeUndefined();
    expect(getRequestValidator('post', '/v1/chat/completions')).toBe(
      getRequestValidator('POST', '/v1/chat/completions'),
    );
  });

  it('accepts good chat bodies, including provider extras, nulls, parts, stop arrays and edge values', () => {
    const v = validator('POST', '/v1/chat/completions');
    const good: unknown[] = [
      chat,
      { ...chat, temperature: 0, top_p: 1, presence_penalty: -2, frequency_penalty: 2, n: 2, max_tokens: 1 },
      { ...chat, temperature: 2, stop: ['a', 'b'], stream: true, stream_options: { include_usage: true } },
      { ...chat, temperature: null, max_tokens: null, stop: null, provider_specific: { anything: 1 } },
      {
        model: 'm',
        messages: [
          { role: 'system', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this' },
              { type: 'image_url', image_url: { url: 'data:x' } },
            ],
          },
          { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function' }] },
          { role: 'tool', content: 'ok', tool_call_id: 't' },
        ],
      },
    ];
    for (const body of good) expect(() => v(body)).not.toThrow();
  });

  it.each([
    [{ ...chat, messages: 'hi' }, 'messages', 'messages: must be array'],
    [{ messages: chat.messages }, 'model', 'model: is required'],
    [{ ...chat, model: '' }, 'model', 'model: must NOT have fewer than 1 characters'],
    [{ ...chat, messages: [] }, 'messages', 'messages: must NOT have fewer than 1 items'],
    [{ ...chat, temperature: 2.5 }, 'temperature', 'temperature: must be <= 2'],
    [{ ...chat, temperature: -0.1 }, 'temperature', 'temperature: must be >= 0'],
    [{ ...chat, temperature: '1' }, 'temperature', 'temperature: must be number or null'],
    [{ ...chat, presence_penalty: -3 }, 'presence_penalty', 'presence_penalty: must be >= -2'],
    [{ ...chat, frequency_penalty: 2.01 }, 'frequency_penalty', 'frequency_penalty: must be <= 2'],
    [{ ...chat, max_tokens: 1.5 }, 'max_tokens', 'max_tokens: must be integer or null'],
    [{ ...chat, max_tokens: 0 }, 'max_tokens', 'max_tokens: must be >= 1'],
    [{ ...chat, stream: 'yes' }, 'stream', 'stream: must be boolean or null'],
    [{ ...chat, stop: 5 }, 'stop', 'stop: must be string or array or null'],
    [{ ...chat, messages: [{ content: 'x' }] }, 'messages[0].role', 'messages[0].role: is required'],
    [
      { ...chat, messages: [{ role: 'user', content: 5 }] },
      'messages[0].content',
      'messages[0].content: must be string or array or null',
    ],
    [
      { ...chat, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] },
      'messages[0].content[0].image_url.url',
      'messages[0].content[0].image_url.url: is required',
    ],
    [[chat], 'body', 'body: must be object'],
  ])('rejects a bad chat body naming the field: %j', (body, field, message) => {
    const err = rejection('POST', '/v1/chat/completions', body);
    expect(err.code).toBe('validation_failed');
    expect(err.status).toBe(400);
    expect(err.message).toBe(message);
    expect(err.details?.field).toBe(field);
    expect(Array.isArray(err.details?.errors)).toBe(true);
    expect(err.toEnvelope().error).toMatchObject({ type: 'invalid_request', code: 'validation_failed' });
  });

  it('names the allowed values of an enum', () => {
    const err = rejection('POST', '/v1/chat/completions', {
      ...chat,
      messages: [{ role: 'robot', content: 'x' }],
    });
    expect(err.message).toBe(
      'messages[0].role: must be one of system, developer, user, assistant, tool, function',
    );
  });

  it('refuses a missing body where one is required, and allows it where it is optional', () => {
    const err = rejection('POST', '/v1/chat/completions', undefined);
    expect(err.message).toBe('body: is required');
    expect(() => validator('POST', '/v1/wallet/withdraw')(undefined)).not.toThrow();
    expect(() => validator('POST', '/v1/wallet/topup')(undefined)).not.toThrow(); // token may be in the query
    expect(() => validator('POST', '/v1/wallet/topup')({})).not.toThrow();
  });

  it('checks child-key count 1..50 and refuses unknown fields on our own bodies', () => {
    const v = validator('POST', '/v1/balance/child-key');
    expect(() => v({ count: 1 })).not.toThrow();
    expect(() =>
      v({ count: 50, balance_limit: 1000, balance_limit_reset: 'daily', validity_date: null }),
    ).not.toThrow();
    expect(rejection('POST', '/v1/balance/child-key', { count: 0 }).message).toBe('count: must be >= 1');
    expect(rejection('POST', '/v1/balance/child-key', { count: 51 }).message).toBe('count: must be <= 50');
    expect(rejection('POST', '/v1/balance/child-key', {}).message).toBe('count: is required');
    const extra = rejection('POST', '/v1/balance/child-key', { count: 2, colour: 'red' });
    expect(extra.message).toBe('colour: is not allowed');
    expect(extra.details?.field).toBe('colour');
    expect(
      rejection('POST', '/v1/balance/child-key', { count: 2, balance_limit_reset: 'hourly' }).details?.field,
    ).toBe('balance_limit_reset');
  });

  it('checks wallet bodies: tokens, amounts, mints, IP lists, sub-keys', () => {
    expect(() =>
      validator('POST', '/v1/wallet/create')({ cashu_token: 'cashuBo2FteCJodHRwOi8v' }),
    ).not.toThrow();
    expect(rejection('POST', '/v1/wallet/create', {}).message).toBe('cashu_token: is required');
    expect(rejection('POST', '/v1/wallet/create', { cashu_token: 'sk-notatoken' }).details?.field).toBe(
      'cashu_token',
    );
    expect(rejection('POST', '/v1/wallet/create', { cashu_token: 'cashuAabcdefgh', x: 1 }).message).toBe(
      'x: is not allowed',
    );
    const withdraw = validator('POST', '/v1/wallet/withdraw');
    expect(() => withdraw({})).not.toThrow();
    expect(() => withdraw({ amount: 10, mint: 'https://mint.example.com' })).not.toThrow();
    expect(rejection('POST', '/v1/wallet/withdraw', { amount: 0 }).message).toBe('amount: must be >= 1');
    expect(rejection('POST', '/v1/wallet/withdraw', { mint: 'not a url' }).details?.field).toBe('mint');
    const update = validator('POST', '/v1/wallet/update');
    expect(() => update({ allowed_ips: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'] })).not.toThrow();
    expect(() => update({ allowed_ips: [] })).not.toThrow();
    expect(rejection('POST', '/v1/wallet/update', { allowed_ips: ['evil host'] }).details?.field).toBe(
      'allowed_ips[0]',
    );
    const subkey = validator('POST', '/v1/wallet/create/subkey');
    expect(() =>
      subkey({ name: 'ci', balance_limit: 5000, allowed_models: ['m'], expires_in_hours: 24 }),
    ).not.toThrow();
    expect(rejection('POST', '/v1/wallet/create/subkey', { expires_in_hours: 0 }).details?.field).toBe(
      'expires_in_hours',
    );
    expect(() => validator('POST', '/v1/balance/refund')({ cashu_token: 'cashuAabcdefgh' })).not.toThrow();
    expect(() => validator('POST', '/v1/wallet/refund')({})).not.toThrow();
    expect(rejection('POST', '/v1/wallet/refund', { amount: 1 }).message).toBe('amount: is not allowed');
  });

  it('checks the other model endpoints, the estimate and the admin patch', () => {
    expect(() =>
      validator('POST', '/v1/embeddings')({ model: 'e', input: ['a', 'b'], dimensions: 8 }),
    ).not.toThrow();
    expect(
      rejection('POST', '/v1/embeddings', { model: 'e', input: 'a', encoding_format: 'hex' }).details?.field,
    ).toBe('encoding_format');
    expect(rejection('POST', '/v1/embeddings', { model: 'e' }).message).toBe('input: is required');
    expect(() =>
      validator('POST', '/v1/completions')({ model: 'm', prompt: 'once upon', max_tokens: 5 }),
    ).not.toThrow();
    expect(rejection('POST', '/v1/completions', { model: 'm', prompt: 'x', temperature: 3 }).message).toBe(
      'temperature: must be <= 2',
    );
    expect(() => validator('POST', '/v1/responses')({ model: 'm', input: 'hi', extra: true })).not.toThrow();
    expect(rejection('POST', '/v1/responses', { input: 'hi' }).message).toBe('model: is required');
    expect(
      rejection('POST', '/v1/images/generations', { model: 'dall-e-3', prompt: 'cat', size: 'huge' }).details
        ?.field,
    ).toBe('size');
    // The gateway prices images by model: a generation without one is refused by the schema.
    expect(rejection('POST', '/v1/images/generations', { prompt: 'cat' }).message).toBe('model: is required');
    const est = validator('POST', '/v1/estimate');
    expect(() => est({ model: 'm', prompt_tokens: 100, max_tokens: 50 })).not.toThrow();
    expect(
      rejection('POST', '/v1/estimate', { model: 'm', prompt_tokens: -1, max_tokens: 5 }).details?.field,
    ).toBe('prompt_tokens');
    const patch = validator('PATCH', '/admin/api/settings');
    expect(() => patch({ fixed_pricing: false, exchange_fee: 1.01 })).not.toThrow();
    expect(rejection('PATCH', '/admin/api/settings', {}).details?.field).toBe('body');
    expect(rejection('PATCH', '/admin/api/settings', { admin_password: 'x' }).message).toBe(
      'admin_password: is not allowed',
    );
    expect(
      rejection('POST', '/v1/webhooks', {
        url: 'https://h.example/x',
        events: ['key.deleted'],
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      }).details?.field,
    ).toBe('events[0]');
  });

  it('bounds details.errors and never echoes the offending value', () => {
    const err = rejection('POST', '/v1/wallet/create', { cashu_token: 'notatoken-secret-value' });
    expect(JSON.stringify(err.toEnvelope())).not.toContain('secret-value');
    expect(err.details?.errors).toBeInstanceOf(Array);
    expect((err.details!.errors as unknown[]).length).toBeLessThanOrEqual(20);
  });
});

describe('toJsonSchema (OpenAPI 3.0 → JSON Schema)', () => {
  it('turns nullable into a null type, a null enum member, or a null alternative', () => {
    expect(toJsonSchema({ type: 'string', nullable: true })).toEqual({ type: ['string', 'null'] });
    expect(toJsonSchema({ type: 'string', enum: ['a'], nullable: true })).toEqual({
      type: ['string', 'null'],
      enum: ['a', null],
    });
    expect(toJsonSchema({ $ref: '#/components/schemas/X', nullable: true })).toEqual({
      anyOf: [{ $ref: 'openapi-components#/definitions/X' }, { type: 'null' }],
    });
  });

  it('translates boolean exclusive bounds and drops OpenAPI-only keys but keeps x- property names', () => {
    expect(
      toJsonSchema({ type: 'number', minimum: 0, exclusiveMinimum: true, example: 1, 'x-foo': 1 }),
    ).toEqual({
      type: 'number',
      exclusiveMinimum: 0,
    });
    expect(
      toJsonSchema({ type: 'object', properties: { 'x-node-cost': { type: 'object', example: {} } } }),
    ).toEqual({
      type: 'object',
      properties: { 'x-node-cost': { type: 'object' } },
    });
  });
});

describe('the precompiled validators (core/openapi/generated/validators.cjs, written by npm run gen)', () => {
  const withBody = listOperations().flatMap(({ method, path }) =>
    compileRequestValidator(method, path) === undefined ? [] : [`${method.toUpperCase()} ${path}`],
  );

  it('hold every operation with a JSON body, and nothing else: none is compiled at run time', () => {
    expect(withBody.length).toBeGreaterThanOrEqual(15);
    expect(precompiledOperations().sort()).toEqual([...withBody].sort());
  });

  /** What a validator does with a body: accepted, or the error's message and details. */
  function outcome(v: (body: unknown) => void, body: unknown): unknown {
    try {
      v(body);
      return 'accepted';
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      return { message: err.message, details: err.details };
    }
  }

  it('answer every body as the validator compiled at run time does (same acceptance, same error)', () => {
    // Bodies near the chat request (each of its fields set to any JSON value, or removed) and any JSON at all.
    const fields = ['model', 'messages', 'temperature', 'max_tokens', 'stream', 'stop', 'n', 'tools', 'user'];
    const nearChat = fc
      .tuple(fc.constantFrom(...fields), fc.option(fc.jsonValue(), { nil: undefined }))
      .map(([k, v]) => {
        const body: Record<string, unknown> = { ...chat };
        if (v === undefined) delete body[k];
        else body[k] = v;
        return body;
      });
    const body = fc.oneof(nearChat, fc.jsonValue(), fc.constant(chat), fc.constant(undefined));
    for (const key of withBody) {
      const [method, path] = key.split(' ') as [string, string];
      const pre = validator(method, path);
      const compiled = compileRequestValidator(method, path)!;
      fc.assert(
        fc.property(body, (b) => {
          expect(outcome(pre, b)).toEqual(outcome(compiled, b));
        }),
        { numRuns: 60 },
      );
    }
  });
});
