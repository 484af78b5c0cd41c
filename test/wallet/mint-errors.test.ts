import { HttpResponseError, MintOperationError, NetworkError, RateLimitError } from '@cashu/cashu-ts';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../core/errors.js';
import { classifyMintFailure, mapMintError } from '../../core/wallet/mint-errors.js';

/** The one mapping from mint failures to the error catalogue (issue #4 §3). */
describe('mint error mapping', () => {
  const cases: Array<[unknown, string]> = [
    [new MintOperationError(11001, 'spent'), 'token_already_spent'],
    [new MintOperationError(11002, 'pending'), 'token_pending'],
    [new MintOperationError(10001, 'verification failed'), 'invalid_token'],
    [new MintOperationError(10003, 'legacy: could not be verified'), 'invalid_token'],
    [new MintOperationError(11007, 'duplicate inputs'), 'invalid_token'],
    [new MintOperationError(12001, 'unknown keyset'), 'invalid_token'],
    [new MintOperationError(12002, 'inactive keyset'), 'invalid_token'],
    [new MintOperationError(11005, 'unbalanced'), 'mint_unavailable'],
    [new HttpResponseError('boom', 500), 'mint_unavailable'],
    [new HttpResponseError('bad gateway', 502), 'mint_unavailable'],
    [new RateLimitError('slow down', 1000), 'mint_unavailable'],
    [new NetworkError('fetch failed'), 'mint_unavailable'],
  ];
  it.each(cases)('%s → %s', (err, code) => {
    const mapped = mapMintError(err);
    expect(mapped.code).toBe(code);
    expect(mapped.status).toBe(ERRORS[mapped.code].status);
  });

  it('uses the statuses the issue asks for', () => {
    expect(mapMintError(new MintOperationError(11001, 'x')).status).toBe(400);
    expect(mapMintError(new MintOperationError(11002, 'x')).status).toBe(409);
    expect(mapMintError(new NetworkError('x')).status).toBe(503);
  });

  it('tells definitive refusals from answers that may hide a completed swap', () => {
    expect(classifyMintFailure(new MintOperationError(11001, 'x'))).toBe('rejected');
    const refused = new NetworkError('fetch failed', {
      cause: Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }),
    });
    expect(classifyMintFailure(refused)).toBe('unreachable');
    expect(classifyMintFailure(new NetworkError('socket closed'))).toBe('ambiguous');
    expect(classifyMintFailure(new HttpResponseError('boom', 500))).toBe('ambiguous');
    expect(classifyMintFailure(new HttpResponseError('not found', 404))).toBe('rejected');
  });

  it('never puts the mint detail text (which may quote inputs) into the public message', () => {
    const err = mapMintError(new MintOperationError(11005, 'secret=abc'));
    expect(err.message).not.toContain('secret');
    expect(JSON.stringify(err.toEnvelope())).not.toContain('abc');
  });
});
