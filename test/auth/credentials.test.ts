import { describe, expect, it } from 'vitest';
import { parseCredential } from '../../core/auth/credentials.js';
import { codeOf } from '../support/errors.js';

describe('parseCredential', () => {
  it('recognises the three payment modes and the GET query key', () => {
    expect(parseCredential({ method: 'POST', headers: { authorization: 'Bearer sk-abc' } })).toEqual({
      kind: 'api_key',
      apiKey: 'sk-abc',
    });
    expect(parseCredential({ method: 'POST', headers: { authorization: 'bearer cashuBxyz' } })).toEqual({
      kind: 'bearer_token',
      token: 'cashuBxyz',
    });
    expect(parseCredential({ method: 'POST', headers: { 'x-cashu': 'cashuAxyz' } })).toEqual({
      kind: 'x_cashu',
      token: 'cashuAxyz',
    });
    expect(parseCredential({ method: 'GET', headers: {}, queryApiKey: 'sk-q' })).toEqual({
      kind: 'api_key',
      apiKey: 'sk-q',
    });
  });

  it('ignores the api_key query parameter on non-GET requests', () => {
    expect(parseCredential({ method: 'POST', headers: {}, queryApiKey: 'sk-q' })).toBeUndefined();
  });

  it('returns undefined without credentials', () => {
    expect(parseCredential({ method: 'GET', headers: {} })).toBeUndefined();
  });

  it('refuses unknown shapes and ambiguous combinations with precise codes', () => {
    expect(codeOf(() => parseCredential({ method: 'POST', headers: { authorization: 'Basic abc' } }))).toBe(
      'invalid_api_key',
    );
    expect(codeOf(() => parseCredential({ method: 'POST', headers: { authorization: 'Bearer xyz' } }))).toBe(
      'invalid_api_key',
    );
    expect(codeOf(() => parseCredential({ method: 'POST', headers: { 'x-cashu': 'sk-nope' } }))).toBe(
      'invalid_token',
    );
    expect(
      codeOf(() =>
        parseCredential({ method: 'POST', headers: { authorization: 'Bearer sk-a', 'x-cashu': 'cashuAx' } }),
      ),
    ).toBe('invalid_request');
  });
});
