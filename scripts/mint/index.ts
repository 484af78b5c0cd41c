import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { getEncodedToken, normalizeProofAmounts } from '@cashu/cashu-ts';
import { encodeTokenV3 } from '../../core/wallet/token-codec.js';
import { blindMessageOf, unblind } from './crypto.js';
import { fakeInvoice, joinFakeNetwork, type LightningMode } from './fake-lightning.js';
import type { MintUnit } from './keysets.js';
import { MintCore, splitPow2 } from './mint-core.js';
import { createMintServer, type MintServerControls } from './server.js';
import { freshState, loadState } from './state.js';
import { attachWebSocket } from './websocket.js';

export { encodeInvoice, fakeInvoice, type LightningMode } from './fake-lightning.js';
export type { MintUnit } from './keysets.js';

/**
 * A spec-compliant Cashu mint on loopback for development and tests (see docs/wallet.md): NUT-00..09 and 12,
 * sat and msat keysets with a configurable input fee, and a fake Lightning backend.
 */
export interface DevMintOptions {
  /** Port; 0 (default) picks a free one. */
  port?: number;
  host?: '127.0.0.1';
  /** `input_fee_ppk` of the active keysets (NUT-02); default 0. */
  inputFeePpk?: number;
  units?: MintUnit[];
  /** Melt fee reserve, ppk of the amount (minimum 1 unit); default 10 000 (1 %). */
  feeReservePpk?: number;
  /**
   * The routing fee the fake Lightning actually charges on a melt, ppk of the amount (rounded up, capped at
   * the reserve); default 0. What the reserve leaves over comes back as NUT-08 change.
   */
  lightningFeePpk?: number;
  /**
   * Offer NUT-17 WebSocket subscriptions (default true). false: the info omits NUT-17 and `GET /v1/ws` is
   * refused, so clients must poll.
   */
  nut17?: boolean;
  /**
   * Offer NUT-09 restore (default true; it is optional). false: the info omits NUT-09 and `POST /v1/restore`
   * answers 404, like a mint without it.
   */
  nut09?: boolean;
  /**
   * `auto` (default): mint quotes are paid the moment they are created. `manual`: they stay UNPAID until
   * `payMintQuote(id)` or the dev-only `POST /dev/pay/mint-quote/{quote}` pays them.
   */
  mintQuotePayment?: 'auto' | 'manual';
  /** Lifetime of mint quotes in seconds; default 3600. */
  mintQuoteTtlS?: number;
  /** Lifetime of melt quotes in seconds (a melt after it is refused, NUT-05); default 3600. */
  meltQuoteTtlS?: number;
  /** Keep state in this JSON file (keys, spent set, quotes) across restarts. */
  dataFile?: string;
}

export interface DevMint {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  port: number;
  /** Active keyset id per unit. */
  keysetIds: Partial<Record<MintUnit, string>>;
  /**
   * Mints a fresh token of `amount` (in `unit`): a NUT-04 quote, paid, and its outputs signed by the mint's own
   * `mint` step, in process (no HTTP round trips, and no cashu-ts wallet checking this mint's DLEQ proofs in pure
   * JavaScript: the suites mint thousands of tokens). Outputs are blinded and unblinded as a wallet does
   * (scripts/mint/crypto.ts), each proof carries its NUT-12 DLEQ proof with its blinding factor, so a wallet
   * receiving the token can check it (test/mint/mint-crypto.test.ts has cashu-ts do so). Refused while the mint
   * is down (`setOutage`), as the HTTP flow was.
   */
  mintTokens(amount: number, unit?: MintUnit, opts?: { version?: 3 | 4 }): Promise<string>;
  /**
   * A fresh BOLT11 invoice of a node elsewhere on the fake network (not this mint's): the mint's Lightning
   * backend "pays" it in melts.
   */
  invoice(amountMsat: number): string;
  /** The fake Lightning node key (compressed, hex) that signs this mint's mint-quote invoices. */
  nodePubkey: string;
  /** Pays a mint quote's invoice (UNPAID → PAID), as the dev-only HTTP endpoint does. */
  payMintQuote(quote: string): void;
  /**
   * Pays the mint quote whose invoice this is, as a Lightning wallet pays (the dev-only `POST /dev/pay`):
   * resolves to the preimage whose sha256 is the invoice's payment hash.
   */
  payInvoice(invoice: string): Promise<{ preimage: string }>;
  /**
   * Tests only: the preimage of one of this mint's invoices WITHOUT paying it (what no payer can know; checks
   * that a gateway asks the mint whether the invoice was paid).
   */
  preimageOf(invoice: string): string | undefined;
  /** The id of the mint quote whose invoice this is (tests: the gateway hands out only the invoice). */
  quoteForInvoice(invoice: string): string | undefined;
  /** The state of the melt quote (newest) for this invoice: UNPAID, PENDING, PAID; undefined when none. */
  meltQuoteState(invoice: string): string | undefined;
  /** pay (default) | pending (melts hang PENDING) | fail (melts fail with 20004). */
  setLightningMode(mode: LightningMode): void;
  /**
   * Answer every request with this HTTP status (e.g. 500), or null to serve normally. An outage also drops
   * every open NUT-17 WebSocket and refuses new ones until it ends.
   */
  setOutage(status: number | null): void;
  /**
   * Requests whose path matches `path` are handled (their state change applies) but never answered until
   * `setStall(null)` or close(): a mint that accepts and then hangs, e.g. holding a melt while its Lightning
   * payment is in flight (with `setLightningMode('pending')`). Requests stalled before are not answered later.
   */
  setStall(path: RegExp | null): void;
  /** Drops every open NUT-17 WebSocket (a lost connection) without an outage. */
  dropWebSockets(): void;
  close(): Promise<void>;
}

export async function startDevMint(opts: DevMintOptions = {}): Promise<DevMint> {
  const units = opts.units ?? ['sat', 'msat'];
  const state = (opts.dataFile ? loadState(opts.dataFile) : undefined) ?? freshState();
  const core = new MintCore(state, {
    units,
    inputFeePpk: opts.inputFeePpk ?? 0,
    feeReservePpk: opts.feeReservePpk ?? 10_000,
    mintQuotePayment: opts.mintQuotePayment ?? 'auto',
    mintQuoteTtlS: opts.mintQuoteTtlS,
    meltQuoteTtlS: opts.meltQuoteTtlS,
    dataFile: opts.dataFile,
    lightningFeePpk: opts.lightningFeePpk ?? 0,
    nut17: opts.nut17 ?? true,
    nut09: opts.nut09 ?? true,
  });
  const leaveNetwork = joinFakeNetwork(
    (invoice) => core.receivePayment(invoice),
    (invoice) => core.paidPreimage(invoice),
  );
  const controls: MintServerControls = { outageStatus: null };
  const server = createMintServer(core, controls, { nut09: opts.nut09 ?? true });
  const ws = attachWebSocket(server, core, () => controls.outageStatus !== null || opts.nut17 === false);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const keysetIds: Partial<Record<MintUnit, string>> = {};
  for (const u of units) keysetIds[u] = core.activeKeyset(u).id;
  return {
    url,
    port,
    keysetIds,
    async mintTokens(amount, unit = 'sat', o = {}) {
      if (controls.outageStatus !== null)
        throw new Error(`dev mint: down (answering ${controls.outageStatus})`);
      const quote = core.createMintQuote({ amount, unit }) as { quote: string; state: string };
      if (quote.state === 'UNPAID') core.payMintQuote(quote.quote);
      const ks = core.activeKeyset(unit);
      // The amount in powers of two, as a wallet splits it (and as the mint splits melt change).
      const outputs = splitPow2(amount).map((a) => {
        const secret = randomBytes(32).toString('hex');
        return { amount: a, secret, ...blindMessageOf(new TextEncoder().encode(secret)) };
      });
      const { signatures } = core.mint({
        quote: quote.quote,
        outputs: outputs.map((x) => ({ amount: x.amount, id: ks.id, B_: x.B_ })),
      }) as { signatures: { id: string; amount: number; C_: string; dleq: { e: string; s: string } }[] };
      const proofs = normalizeProofAmounts(
        signatures.map((sig, i) => {
          const out = outputs[i]!;
          const A = ks.pubKeysUncompressed[String(out.amount)]!;
          return {
            id: sig.id,
            amount: out.amount,
            secret: out.secret,
            C: unblind(sig.C_, out.r, A),
            dleq: { e: sig.dleq.e, s: sig.dleq.s, r: Buffer.from(out.r).toString('hex') },
          };
        }),
      );
      const token = { mint: url, proofs, unit };
      return o.version === 3 ? encodeTokenV3(token) : getEncodedToken(token);
    },
    invoice: (amountMsat) => fakeInvoice(amountMsat),
    nodePubkey: core.nodePubkey,
    payMintQuote(quote) {
      core.payMintQuote(quote);
    },
    async payInvoice(invoice) {
      const paid = core.payInvoice(invoice);
      const preimage = paid.payment_preimage;
      if (typeof preimage !== 'string') throw new Error('dev mint: the quote has no preimage');
      return { preimage };
    },
    preimageOf(invoice) {
      for (const q of state.mintQuotes.values()) if (q.request === invoice) return q.preimage;
      return undefined;
    },
    quoteForInvoice(invoice) {
      for (const q of state.mintQuotes.values()) if (q.request === invoice) return q.quote;
      return undefined;
    },
    meltQuoteState(invoice) {
      let found: string | undefined;
      for (const q of state.meltQuotes.values()) if (q.request === invoice) found = q.state;
      return found;
    },
    setLightningMode(mode) {
      core.lightningMode = mode;
    },
    setOutage(status) {
      controls.outageStatus = status;
      if (status !== null) ws.dropAll();
    },
    setStall(path) {
      controls.stall = path;
    },
    dropWebSockets() {
      ws.dropAll();
    },
    async close() {
      leaveNetwork();
      ws.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
