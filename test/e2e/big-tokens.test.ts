import { getEncodedToken } from '@cashu/cashu-ts';
import { describe, expect, it } from 'vitest';
import { createWallet } from '../../core/wallet/wallet.js';
import { rawRequest } from '../../scripts/fuzz/raw-http.js';
import { paidGatewayPerSuite } from '../support/paid-gateway.js';

/**
 * Tokens with many proofs make big request heads: a 100-proof token is ~30 KB of `Authorization` or `X-Cashu`.
 * Real networks deliver such a head in many TCP segments; the default engine must take it whole and charge the
 * call exactly. Sent as raw bytes in 60 writes, 2 ms apart, on both stores.
 */
/**
 * Minting 100 proofs, and the gateway's swap of them at the mint, are seconds of CPU on an idle machine (blind
 * signatures and their checks, in JavaScript): on a busy one much more. Nothing here measures time, so each
 * test and its raw request get a bound that holds at several times today's load.
 */
const TEST_MS = 180_000;
const MINT_MS = 90_000;

const CHAT = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] });

describe.each(['sqlite', 'redis'] as const)(
  '100-proof tokens in segmented heads (%s, default engine)',
  (store) => {
    // The mint calls (the gateway's swap of 100 proofs, and cashu-ts's request timeout, which the wallet sets
    // for the whole process) get MINT_MS instead of 15 s: blind signing 100 outputs is what a busy machine slows.
    const h = paidGatewayPerSuite({
      store,
      money: { createWallet: (opts) => createWallet({ ...opts, mintTimeoutMs: MINT_MS }) },
    });

    /** A token of 100 one-sat proofs from the dev mint. */
    async function hundredProofToken(): Promise<string> {
      const w = await h.newWallet();
      const quote = await w.createMintQuoteBolt11(100);
      const proofs = await w.mintProofsBolt11(100, quote, undefined, {
        type: 'random',
        denominations: Array.from({ length: 100 }, () => 1),
      });
      expect(proofs).toHaveLength(100);
      return getEncodedToken({ mint: h.mint.url, proofs, unit: 'sat' });
    }

    function chatRequest(header: string): Buffer {
      return Buffer.from(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: gw.test\r\n${header}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${CHAT.length}\r\n\r\n${CHAT}`,
      );
    }

    /** The chat call with `header`, written in 60 segments 2 ms apart; its answer. */
    function segmented(header: string) {
      return rawRequest(chatRequest(header), {
        port: h.gateway.port,
        segments: 60,
        segmentDelayMs: 2,
        timeoutMs: 120_000,
        endAfterWrite: false,
        stopAfterAnswer: true,
      });
    }

    it(
      'a 100-proof token as the bearer pays for a call: 1 sat charged, 99 left',
      async () => {
        const token = await hundredProofToken();
        expect(token.length).toBeGreaterThan(10_000);
        const res = await segmented(`Authorization: Bearer ${token}`);
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body.toString()).object).toBe('chat.completion');
        expect(await h.available(token)).toBe(99_000);
      },
      TEST_MS,
    );

    it(
      'a 100-proof token in X-Cashu pays for a call and the change (99 sats) redeems',
      async () => {
        const token = await hundredProofToken();
        const res = await segmented(`X-Cashu: ${token}`);
        expect(res.status).toBe(200);
        const change = res.headers['x-cashu'];
        expect(change).toMatch(/^cashu/);
        expect(await h.redeem(change!)).toBe(99);
      },
      TEST_MS,
    );
  },
);
