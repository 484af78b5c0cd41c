import { createHash } from 'node:crypto';
import { join } from 'node:path';
import {
  CheckStateEnum,
  getDecodedToken,
  hasValidDleq,
  isMintOperationError,
  Keyset,
  type MintKeys,
  OutputData,
  type Proof,
  Wallet,
} from '@cashu/cashu-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { bolt11AmountMsat, decodeBolt11 } from '../../core/wallet/bolt11.js';
import { fakeInvoice, startDevMint } from '../../scripts/mint/index.js';
import type { DevMint } from '../support/dev-mint.js';
import { withTempDir } from '../support/temp-dir.js';

/** True when the mint answers the NUT-17 WebSocket upgrade with an HTTP error instead of a socket. */
async function upgradeRefused(url: string): Promise<boolean> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/ws`);
  return await new Promise<boolean>((resolve) => {
    ws.once('open', () => {
      ws.close();
      resolve(false);
    });
    ws.once('error', () => resolve(true));
  });
}

/**
 * The dev mint speaks the Cashu protocol to an unmodified cashu-ts client over HTTP: keysets (NUT-01/02, ids
 * that verify, input_fee_ppk), mint/swap/melt (NUT-03/04/05) with NUT-02 fees enforced, NUT-07 states,
 * NUT-08 change, NUT-09 restore, NUT-12 DLEQ, and the NUT error codes.
 */

async function mintCode(p: Promise<unknown>): Promise<number | string> {
  const err = await p.then(
    () => 'no error',
    (e: unknown) => e,
  );
  return isMintOperationError(err) ? err.code : String(err);
}

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const wire = (proofs: Proof[]) =>
  proofs.map((p) => ({ id: p.id, amount: p.amount.toNumber(), secret: p.secret, C: p.C }));

/** Runs `body` with a dev mint whose quotes stay unpaid until paid, and a loaded sat wallet at it; closes the mint. */
async function withManualMint(body: (manual: DevMint, w: Wallet) => Promise<void>): Promise<void> {
  const manual = await startDevMint({ mintQuotePayment: 'manual' });
  try {
    const w = new Wallet(manual.url, { unit: 'sat' });
    await w.loadMint();
    await body(manual, w);
  } finally {
    await manual.close();
  }
}

describe('dev mint', () => {
  let mint: DevMint;
  let sat: Wallet;
  let msat: Wallet;

  beforeAll(async () => {
    mint = await startDevMint({ inputFeePpk: 250 });
    sat = new Wallet(mint.url, { unit: 'sat' });
    msat = new Wallet(mint.url, { unit: 'msat' });
    await sat.loadMint();
    await msat.loadMint();
  });
  afterAll(async () => {
    await mint.close();
  });

  it('publishes sat and msat keysets whose ids verify, with the configured input fee (NUT-01/02/06)', async () => {
    expect(mint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const keys = (await (await fetch(`${mint.url}/v1/keys`)).json()) as { keysets: MintKeys[] };
    expect(keys.keysets.map((k) => k.unit).sort()).toEqual(['msat', 'sat']);
    for (const k of keys.keysets) {
      expect(Keyset.verifyKeysetId(k)).toBe(true);
      expect(k.input_fee_ppk).toBe(250);
    }
    const info = sat.getMintInfo();
    expect(info.isSupported(7).supported).toBe(true);
    expect(info.isSupported(9).supported).toBe(true);
    expect(info.isSupported(12).supported).toBe(true);
    expect((await fetch(`${mint.url}/v1/keys/00ffffffffffffff`)).status).toBe(400);
  });

  it('mints sat and msat proofs through paid quotes, with valid DLEQ proofs (NUT-04, NUT-12)', async () => {
    const q = await sat.createMintQuoteBolt11(100);
    expect(q.state).toBe('PAID');
    // A real BOLT11 invoice for the quote, signed by this mint's fake Lightning node, expiring with the quote.
    const invoice = decodeBolt11(q.request);
    expect(invoice).toMatchObject({
      prefix: 'lnbcrt',
      amountMsat: 100_000n,
      payee: mint.nodePubkey,
      description: `dev mint quote ${q.quote}`,
      expirySeconds: 3600,
    });
    expect(Math.abs((invoice?.timestamp ?? 0) - Date.now() / 1000)).toBeLessThan(60);
    const proofs = await sat.mintProofsBolt11(100, q);
    expect(proofs.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(100);
    for (const p of proofs) expect(hasValidDleq(p, sat.getKeyset(p.id))).toBe(true);
    expect(await mintCode(sat.mintProofsBolt11(100, q))).toBe(20002);
    const mq = await msat.createMintQuoteBolt11(1501);
    expect(decodeBolt11(mq.request)).toMatchObject({ amountMsat: 1501n, payee: mint.nodePubkey });
    expect(decodeBolt11(mq.request)?.paymentHash).not.toBe(invoice?.paymentHash);
    const mp = await msat.mintProofsBolt11(1501, mq);
    expect(mp.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(1501);
  });

  it("mintTokens (the suites' token source): proofs of the amount in powers of two, each with a DLEQ proof a wallet checks (sat, msat, V3)", async () => {
    for (const [w, unit, amount] of [
      [sat, 'sat', 1000],
      [msat, 'msat', 1_500_001],
    ] as const) {
      const token = await mint.mintTokens(amount, unit);
      const proofs = getDecodedToken(token, [mint.keysetIds[unit] as string]).proofs;
      expect(proofs.map((p) => p.amount.toNumber()).sort((a, b) => a - b)).toEqual(
        [...amount.toString(2)]
          .reverse()
          .flatMap((b, i) => (b === '1' ? [2 ** i] : []))
          .sort((a, b) => a - b),
      );
      for (const p of proofs) {
        expect(p.dleq?.r).toMatch(/^[0-9a-f]{64}$/);
        expect(hasValidDleq(p, w.getKeyset(p.id))).toBe(true);
      }
      // A wallet that requires the DLEQ proofs takes it (a swap at the mint: the proofs are valid and unspent).
      const received = await w.receive(token, { requireDleq: true });
      expect(received.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(
        amount - Math.ceil((250 * proofs.length) / 1000),
      );
    }
    const v3 = await mint.mintTokens(21, 'sat', { version: 3 });
    expect(v3.startsWith('cashuA')).toBe(true);
    expect((await sat.receive(v3, { requireDleq: true })).reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(
      20,
    );
    // While the mint is down, it refuses, as its HTTP flow does.
    mint.setOutage(503);
    try {
      await expect(mint.mintTokens(5)).rejects.toThrow(/down/);
    } finally {
      mint.setOutage(null);
    }
  });

  it('enforces the input fee on swaps and refuses double spends (NUT-02/03/07)', async () => {
    const token = await mint.mintTokens(64, 'sat');
    const proofs = getDecodedToken(token, [mint.keysetIds.sat as string]).proofs;
    const fee = Math.ceil((proofs.length * 250) / 1000);
    const received = await sat.receive(token);
    expect(received.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(64 - fee);
    const states = await sat.checkProofsStates(proofs);
    expect(states.every((s) => s.state === CheckStateEnum.SPENT)).toBe(true);
    expect(await mintCode(sat.receive(token))).toBe(11001);

    // Outputs that ignore the fee are unbalanced (11005).
    const more = getDecodedToken(await mint.mintTokens(8, 'sat'), [mint.keysetIds.sat as string]).proofs;
    const faceValue = OutputData.createRandomData(8, sat.getKeyset()).map((o) => ({
      ...o.blindedMessage,
      amount: o.blindedMessage.amount.toNumber(),
    }));
    const res = await post(`${mint.url}/v1/swap`, { inputs: wire(more), outputs: faceValue });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 11005 });
    // Nothing changed: the inputs are still unspent.
    expect((await sat.checkProofsStates(more)).every((s) => s.state === CheckStateEnum.UNSPENT)).toBe(true);
  });

  it('answers NUT error codes for bad proofs, unknown keysets, duplicates and reused outputs', async () => {
    const proofs = getDecodedToken(await mint.mintTokens(15, 'sat'), [mint.keysetIds.sat as string]).proofs;
    expect(proofs.length).toBeGreaterThan(1);
    const preview = await sat.prepareSwapToReceive(proofs);
    const outputs = (preview.keepOutputs ?? []).map((o) => ({
      ...o.blindedMessage,
      amount: o.blindedMessage.amount.toNumber(),
    }));
    const forged = wire(proofs).map((p, i) => (i === 0 ? { ...p, C: wire(proofs)[1]?.C ?? p.C } : p));
    expect((await post(`${mint.url}/v1/swap`, { inputs: forged, outputs })).json.code).toBe(10001);
    const unknown = wire(proofs).map((p) => ({ ...p, id: '01'.padEnd(66, 'a') }));
    expect((await post(`${mint.url}/v1/swap`, { inputs: unknown, outputs })).json.code).toBe(12001);
    const dup = [...wire(proofs), ...wire(proofs)];
    expect((await post(`${mint.url}/v1/swap`, { inputs: dup, outputs })).json.code).toBe(11007);
    const ok = await post(`${mint.url}/v1/swap`, { inputs: wire(proofs), outputs });
    expect(ok.status).toBe(200);
    const again = getDecodedToken(await mint.mintTokens(15, 'sat'), [mint.keysetIds.sat as string]).proofs;
    expect((await post(`${mint.url}/v1/swap`, { inputs: wire(again), outputs })).json.code).toBe(11003);
    expect((await post(`${mint.url}/v1/mint/quote/bolt11`, { amount: 5, unit: 'usd' })).json.code).toBe(
      11013,
    );
  });

  it('pays fake invoices with NUT-08 change, and can hold melts pending or fail them (NUT-05)', async () => {
    const proofs = await sat.mintProofsBolt11(200, await sat.createMintQuoteBolt11(200));
    const quote = await sat.createMeltQuoteBolt11(fakeInvoice(120_000));
    expect(quote.amount.toNumber()).toBe(120);
    const res = await sat.meltProofsBolt11(quote, proofs);
    expect(res.quote.state).toBe('PAID');
    const fee = Math.ceil((proofs.length * 250) / 1000);
    expect(res.change.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(200 - 120 - fee);

    const held = await sat.mintProofsBolt11(50, await sat.createMintQuoteBolt11(50));
    mint.setLightningMode('pending');
    const q2 = await sat.createMeltQuoteBolt11(fakeInvoice(30_000));
    const r2 = await sat.meltProofsBolt11(q2, held);
    expect(r2.quote.state).toBe('PENDING');
    expect((await sat.checkProofsStates(held)).every((s) => s.state === CheckStateEnum.PENDING)).toBe(true);
    expect(await mintCode(sat.receive(held))).toBe(11002);
    mint.setLightningMode('pay');
    expect((await sat.checkMeltQuoteBolt11(q2.quote)).state).toBe('PAID');
    expect((await sat.checkProofsStates(held)).every((s) => s.state === CheckStateEnum.SPENT)).toBe(true);

    const more = await sat.mintProofsBolt11(50, await sat.createMintQuoteBolt11(50));
    mint.setLightningMode('fail');
    const q3 = await sat.createMeltQuoteBolt11(fakeInvoice(30_000));
    expect(await mintCode(sat.meltProofsBolt11(q3, more))).toBe(20004);
    mint.setLightningMode('pay');
    expect((await sat.checkProofsStates(more)).every((s) => s.state === CheckStateEnum.UNSPENT)).toBe(true);

    // A melt quote needs a valid BOLT11 invoice with an amount (11012 not an invoice, 11011 amountless).
    const meltQuote = (request: unknown) =>
      post(`${mint.url}/v1/melt/quote/bolt11`, { request, unit: 'sat' });
    const good = fakeInvoice(1000);
    const badChecksum = `${good.slice(0, -1)}${good.endsWith('q') ? 'p' : 'q'}`;
    for (const bad of [
      'lnbcrt1n1x',
      badChecksum,
      fakeInvoice(1000).toUpperCase().replace('LNBCRT', 'lnbcrt'),
      42,
    ]) {
      expect((await meltQuote(bad)).json.code, String(bad)).toBe(11012);
    }
    const amountless =
      'lnbc1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq8rkx3yf5tcsyz3d73gafnh3cax9rn449d9p5uxz9ezhhypd0elx87sjle52x86fux2ypatgddc6k63n7erqz25le42c4u4ecky03ylcqca784w';
    expect((await meltQuote(amountless)).json.code).toBe(11011);
    // NUT-05 amountless (advertised in the info's melt methods): the wallet names the amount; a quote for it, and
    // a melt that pays it. An amount beside an invoice that has one is refused.
    const info = (await (await fetch(`${mint.url}/v1/info`)).json()) as {
      nuts: { '5': { methods: Array<{ unit: string; options?: { amountless?: boolean } }> } };
    };
    expect(info.nuts['5'].methods.find((m) => m.unit === 'sat')?.options?.amountless).toBe(true);
    const named = await post(`${mint.url}/v1/melt/quote/bolt11`, {
      request: amountless,
      unit: 'sat',
      options: { amountless: { amount_msat: 21_000 } },
    });
    expect(named.json).toMatchObject({ amount: 21, unit: 'sat', state: 'UNPAID', request: amountless });
    const bad0 = await post(`${mint.url}/v1/melt/quote/bolt11`, {
      request: amountless,
      unit: 'sat',
      options: { amountless: { amount_msat: 0 } },
    });
    expect(bad0.json.code).toBe(11006);
    const both = await post(`${mint.url}/v1/melt/quote/bolt11`, {
      request: good,
      unit: 'sat',
      options: { amountless: { amount_msat: 5000 } },
    });
    expect(both.json.code).toBe(11011);
    const viaWallet = await sat.createMeltQuoteBolt11(amountless, 30_000);
    expect(viaWallet.amount.toNumber()).toBe(30);
    const funds = await sat.mintProofsBolt11(40, await sat.createMintQuoteBolt11(40));
    expect((await sat.meltProofsBolt11(viaWallet, funds)).quote.state).toBe('PAID');
  });

  it('restores deterministic outputs from a seed (NUT-09, NUT-13)', async () => {
    const seed = new Uint8Array(64).fill(7);
    const a = new Wallet(mint.url, { unit: 'sat', bip39seed: seed });
    await a.loadMint();
    const minted = await a.mintProofsBolt11(
      37,
      await a.createMintQuoteBolt11(37),
      {},
      { type: 'deterministic', counter: 0 },
    );
    const b = new Wallet(mint.url, { unit: 'sat', bip39seed: seed });
    await b.loadMint();
    const { proofs } = await b.batchRestore(20, 20);
    expect(proofs.map((p) => p.secret).sort()).toEqual(minted.map((p) => p.secret).sort());
  });

  it('keeps keys, spent set and quotes in its data file across restarts; a new fee starts a new keyset', async () => {
    await withTempDir('dev-mint-', async (dir) => {
      const file = join(dir, 'mint.json');
      const first = await startDevMint({ dataFile: file });
      const token = await first.mintTokens(10, 'sat');
      const ids = first.keysetIds;
      await first.close();
      const second = await startDevMint({ dataFile: file });
      expect(second.keysetIds).toEqual(ids);
      const w = new Wallet(second.url, { unit: 'sat' });
      await w.loadMint();
      const spentProofs = getDecodedToken(token, [ids.sat as string]).proofs;
      await w.receive(spentProofs);
      await second.close();
      const third = await startDevMint({ dataFile: file, inputFeePpk: 100 });
      expect(third.keysetIds.sat).not.toBe(ids.sat);
      const ks = (await (await fetch(`${third.url}/v1/keysets`)).json()) as {
        keysets: Array<{ id: string; active: boolean }>;
      };
      expect(ks.keysets.find((k) => k.id === ids.sat)?.active).toBe(false);
      const w3 = new Wallet(third.url, { unit: 'sat' });
      await w3.loadMint();
      expect((await w3.checkProofsStates(spentProofs)).every((s) => s.state === CheckStateEnum.SPENT)).toBe(
        true,
      );
      await third.close();
    });
  });

  it('leaves mint quotes UNPAID until the dev-only pay endpoint is called (manual payment)', async () => {
    await withManualMint(async (manual, w) => {
      const q = await w.createMintQuoteBolt11(21);
      expect(q.state).toBe('UNPAID');
      expect((await w.checkMintQuoteBolt11(q.quote)).state).toBe('UNPAID');
      expect(await mintCode(w.mintProofsBolt11(21, q))).toBe(20001);
      const paid = await post(`${manual.url}/dev/pay/mint-quote/${q.quote}`, {});
      expect(paid.status).toBe(200);
      expect(paid.json.state).toBe('PAID');
      expect(paid.json.amount_paid).toBe(21);
      // Paying twice changes nothing; an unknown quote is 20007.
      expect((await post(`${manual.url}/dev/pay/mint-quote/${q.quote}`, {})).json.state).toBe('PAID');
      expect((await post(`${manual.url}/dev/pay/mint-quote/00ff`, {})).json.code).toBe(20007);
      const byInvoice = await w.createMintQuoteBolt11(4);
      expect((await post(`${manual.url}/dev/pay`, { invoice: byInvoice.request })).json.state).toBe('PAID');
      expect((await post(`${manual.url}/dev/pay`, { invoice: 'lnbcrt1n1x' })).json.code).toBe(20007);
      const proofs = await w.mintProofsBolt11(21, q);
      expect(proofs.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(21);
      expect((await w.checkMintQuoteBolt11(q.quote)).state).toBe('ISSUED');
      // mintTokens (the tests' token source) still works against a manual mint: it pays its own quote.
      const five = getDecodedToken(await manual.mintTokens(5), [manual.keysetIds.sat as string]).proofs;
      expect(five.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(5);
    });
    const expiring = await startDevMint({ mintQuotePayment: 'manual', mintQuoteTtlS: 0 });
    try {
      const w = new Wallet(expiring.url, { unit: 'sat' });
      await w.loadMint();
      const q = await w.createMintQuoteBolt11(3);
      const r = await post(`${expiring.url}/dev/pay/mint-quote/${q.quote}`, {});
      expect([r.status, r.json.code]).toEqual([400, 20007]);
    } finally {
      await expiring.close();
    }
  });

  it("pays like a Lightning wallet: /dev/pay answers the preimage whose sha256 is the payment hash, and a melt of another dev mint's invoice reveals it", async () => {
    await withManualMint(async (manual, w) => {
      const q = await w.createMintQuoteBolt11(8);
      const hash = decodeBolt11(q.request)?.paymentHash;
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      // The NUT-04 view never tells the preimage (it proves the payment).
      const before = await fetch(`${manual.url}/v1/mint/quote/bolt11/${q.quote}`).then((r) => r.json());
      expect(before).not.toHaveProperty('preimage');
      expect(before).not.toHaveProperty('payment_preimage');
      const paid = await post(`${manual.url}/dev/pay`, { invoice: q.request });
      expect(paid.json.state).toBe('PAID');
      const preimage = paid.json.payment_preimage as string;
      expect(createHash('sha256').update(Buffer.from(preimage, 'hex')).digest('hex')).toBe(hash);
      // The in-process helper pays the same way; paying again answers the same preimage.
      expect(await manual.payInvoice(q.request)).toEqual({ preimage });
      // Another dev mint melting this invoice (the fake network) gets the same preimage in its melt answer.
      const q2 = await w.createMintQuoteBolt11(5);
      const payer = new Wallet(mint.url, { unit: 'sat' });
      await payer.loadMint();
      const meltQuote = await payer.createMeltQuoteBolt11(q2.request);
      // Enough for amount + fee reserve + the suite mint's input fee; the rest comes back as change.
      const funds = getDecodedToken(await mint.mintTokens(64), [mint.keysetIds.sat as string]).proofs;
      const melted = await payer.meltProofsBolt11(meltQuote, funds);
      expect(melted.quote.state).toBe('PAID');
      const revealed = melted.quote.payment_preimage as string;
      expect(createHash('sha256').update(Buffer.from(revealed, 'hex')).digest('hex')).toBe(
        decodeBolt11(q2.request)?.paymentHash,
      );
      expect((await w.checkMintQuoteBolt11(q2.quote)).state).toBe('PAID');
    });
  });

  it('simulates an outage with any HTTP status; it also closes open NUT-17 sockets and refuses new ones', async () => {
    const ws = new WebSocket(`${mint.url.replace('http', 'ws')}/v1/ws`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const closed = new Promise((resolve) => ws.once('close', resolve));
    mint.setOutage(503);
    await closed;
    expect((await fetch(`${mint.url}/v1/info`)).status).toBe(503);
    expect(await upgradeRefused(mint.url)).toBe(true);
    mint.setOutage(null);
    expect((await fetch(`${mint.url}/v1/info`)).status).toBe(200);
    expect(await upgradeRefused(mint.url)).toBe(false);
  });

  it('nut17: false — the info offers no NUT-17 and /v1/ws is refused', async () => {
    const plain = await startDevMint({ port: 0, nut17: false });
    try {
      const info = (await (await fetch(`${plain.url}/v1/info`)).json()) as { nuts: Record<string, unknown> };
      expect(info.nuts['17']).toBeUndefined();
      expect(info.nuts['4']).toBeDefined();
      expect(await upgradeRefused(plain.url)).toBe(true);
      expect(await upgradeRefused(mint.url)).toBe(false);
    } finally {
      await plain.close();
    }
  });

  it('charges a routing fee out of the reserve (lightningFeePpk) and returns the rest as NUT-08 change', async () => {
    const routed = await startDevMint({ port: 0, feeReservePpk: 20_000, lightningFeePpk: 5_000 });
    try {
      const w = new Wallet(routed.url, { unit: 'sat' });
      await w.loadMint();
      const proofs = await w.mintProofsBolt11(1100, await w.createMintQuoteBolt11(1100));
      const quote = await w.createMeltQuoteBolt11(fakeInvoice(1_000_000));
      // Reserve 2 % of 1000 = 20; the payment costs 0.5 % = 5; no input fee: change 1100 − 1000 − 5 = 95.
      expect(quote.fee_reserve.toNumber()).toBe(20);
      const res = await w.meltProofsBolt11(quote, proofs);
      expect(res.quote.state).toBe('PAID');
      expect(res.change.reduce((s, p) => s + p.amount.toNumber(), 0)).toBe(95);
      const view = (await (await fetch(`${routed.url}/v1/melt/quote/bolt11/${quote.quote}`)).json()) as {
        fee_paid?: number;
      };
      expect(view.fee_paid).toBe(5);
    } finally {
      await routed.close();
    }
  });

  it('makes real, signed BOLT11 invoices: exact amount, a fresh payment hash each, one payee per process', () => {
    const payees = new Set<string>();
    const hashes = new Set<string>();
    for (const msat of [1, 9, 10, 99, 100, 1000, 123_456, 21_000_000, 100_000_000_000]) {
      const inv = fakeInvoice(msat);
      const d = decodeBolt11(inv);
      expect(d, inv).toMatchObject({ prefix: 'lnbcrt', amountMsat: BigInt(msat), expirySeconds: 3600 });
      expect(bolt11AmountMsat(inv)).toBe(BigInt(msat));
      payees.add(d?.payee ?? '');
      hashes.add(d?.paymentHash ?? '');
    }
    expect(payees.size).toBe(1);
    expect(payees.has(mint.nodePubkey)).toBe(false);
    expect(hashes.size).toBe(9);
    expect(() => fakeInvoice(0)).toThrow();
  });
});
