import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet } from '@cashu/cashu-ts';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import {
  type MockBehaviour,
  type MockUpstream,
  startMockUpstream,
} from '../../bench/upstream/mock-upstream.js';
import { type HttpEngine, loadConfig } from '../../core/config.js';
import type { RouteModule } from '../../core/http/router.js';
import type { Ledger } from '../../core/ledger/types.js';
import { createLogger, type Logger } from '../../core/log.js';
import { type Gateway, startGateway } from '../../core/server.js';
import type { MoneyServiceOptions } from '../../core/services.js';
import type { WalletService } from '../../core/wallet/types.js';
import type { PipelineEntry } from '../../plugins/index.js';
import { deleteKeys } from '../../scripts/lib/redis-cleanup.js';
import type { DevMint, DevMintOptions } from '../../scripts/mint/index.js';
import { startTestMint } from './dev-mint.js';
import { lateBound } from './late-bound.js';

/**
 * The paid-call harness: a dev mint, the mock upstream and a gateway running the FULL default pipeline
 * (auth, rate-limit, reserve, relay, meter, settle, change-token) on a real store — SQLite in a temp
 * DATA_DIR or Redis under a random prefix — built from configuration exactly as `npm start` builds it.
 * Tests call `await h.auditOk()` after each test and `await h.close()` at the end.
 */

export type PaidStore = 'sqlite' | 'redis';

export interface PaidGatewayOptions {
  store: PaidStore;
  engine?: HttpEngine;
  /** Pricing and other env for loadConfig, e.g. { FIXED_PRICING: 'false', BTC_USD_PRICE: '50000' }. */
  env?: Record<string, string>;
  /** Pipeline entries; default the configured default pipeline. */
  pipeline?: PipelineEntry[];
  /** Extra route modules (wallet, balance …) in addition to the gateway's defaults. */
  routes?: RouteModule[];
  /** Initial behaviour of the mock upstream. */
  upstream?: Partial<MockBehaviour>;
  /** A providers file (PROVIDERS_PATH) made from the mock upstream's base URL, written to a temp file. */
  providersFile?: (upstreamUrl: string) => object;
  /** A price book (MODELS_PATH, `{ models: [...] }`), written to a temp file. */
  modelsFile?: object;
  mint?: DevMintOptions;
  /** Use this running dev mint instead of starting one (two gateways on one mint); left open by `close`. */
  sharedMint?: DevMint;
  /** Logger; default silent (or TEST_LOG_LEVEL). Pass a captured one to inspect logs. */
  log?: Logger;
  /** How the money services are built: inject a fake store step here (e.g. a ledger whose settle fails). */
  money?: MoneyServiceOptions;
}

export interface PaidGateway {
  readonly gateway: Gateway;
  /** `${gateway.url}/v1`, the OpenAI SDK baseURL. */
  readonly baseURL: string;
  readonly mint: DevMint;
  readonly upstream: MockUpstream;
  readonly ledger: Ledger;
  readonly wallet: WalletService;
  readonly store: PaidStore;
  /** A fresh token of `amount` (in `unit`, default sat) from the dev mint (NUT-04 via cashu-ts). */
  mintToken(amount: number, unit?: 'sat' | 'msat'): Promise<string>;
  /**
   * A funded API key, made the way POST /v1/wallet/create makes one (redeem a fresh token at the dev mint,
   * then `createKeyFromDeposit`), without depending on the wallet routes. Returns the key and its balance.
   */
  fundKey(
    amountSat: number,
    opts?: { expiresAtMs?: number },
  ): Promise<{ apiKey: string; keyId: string; balanceMsat: number }>;
  /** A key made through `POST /v1/wallet/create` with a fresh `amountSat` token (201 asserted). */
  createKey(amountSat: number): Promise<{ apiKey: string; keyId: string }>;
  /** Available balance (msat) of a credential: an API key or an eCash token (its hash identity). */
  available(credential: string): Promise<number | null>;
  /** A separate cashu-ts wallet on the dev mint (redeem change and refunds with `receive`). */
  newWallet(unit?: 'sat' | 'msat'): Promise<Wallet>;
  /** Redeems `token` (change, a refund) with a new separate wallet: the amount received, in `unit` (default sat). */
  redeem(token: string, unit?: 'sat' | 'msat'): Promise<number>;
  /** An OpenAI client on the gateway with this API key (or `Bearer cashu…` token) and extra headers. */
  openai(apiKey: string, headers?: Record<string, string>): OpenAI;
  /** `POST ${baseURL}${path}` with `body` as JSON and `headers` (how it pays: `authorization`, `x-cashu`). */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Throws unless the ledger's conservation check has no breach and the operator's wallet is solvent. */
  auditOk(): Promise<void>;
  close(): Promise<void>;
}

export async function startPaidGateway(opts: PaidGatewayOptions): Promise<PaidGateway> {
  const mint = opts.sharedMint ?? (await startTestMint(opts.mint));
  const closeMint = () => (opts.sharedMint ? Promise.resolve() : mint.close());
  const upstream = await startMockUpstream(opts.upstream);
  const storeEnv: Record<string, string> = {};
  let dataDir: string | undefined;
  let prefix: string | undefined;
  if (opts.store === 'redis') {
    const url = process.env.TEST_REDIS_URL;
    if (!url) throw new Error('TEST_REDIS_URL is not set (global setup)');
    prefix = `tpaid${randomBytes(6).toString('hex')}`;
    storeEnv.REDIS_URL = url;
    storeEnv.REDIS_PREFIX = prefix;
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-paid-'));
    storeEnv.DATA_DIR = dataDir;
  }
  let filesDir: string | undefined;
  const writeJson = (name: string, content: object): string => {
    filesDir ??= mkdtempSync(join(tmpdir(), 'gw-files-'));
    const path = join(filesDir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  if (opts.providersFile)
    storeEnv.PROVIDERS_PATH = writeJson('providers.json', opts.providersFile(upstream.url));
  if (opts.modelsFile) storeEnv.MODELS_PATH = writeJson('models.json', opts.modelsFile);
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    HTTP_ENGINE: opts.engine ?? loadConfig({}).httpEngine,
    UPSTREAM_BASE_URL: upstream.url,
    UPSTREAM_TIMEOUT_MS: '10000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CASHU_MINTS: mint.url,
    ...storeEnv,
    ...opts.env,
  });
  let gateway: Gateway;
  try {
    gateway = await startGateway({
      config,
      log: opts.log ?? createLogger(config.logLevel),
      ...(opts.pipeline ? { pipeline: opts.pipeline } : {}),
      ...(opts.routes ? { routes: opts.routes } : {}),
      ...(opts.money ? { money: opts.money } : {}),
      awaitCatalog: true,
    });
  } catch (err) {
    await Promise.allSettled([closeMint(), upstream.close()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (filesDir) rmSync(filesDir, { recursive: true, force: true });
    throw err;
  }
  const ledger = gateway.services.ledger;
  const wallet = gateway.services.wallet;
  if (!ledger || !wallet) {
    await gateway.close(0);
    throw new Error('the paid gateway started without a ledger or wallet');
  }
  const baseURL = `${gateway.url}/v1`;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseURL}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  let closed = false;
  return {
    gateway,
    baseURL,
    mint,
    upstream,
    ledger,
    wallet,
    store: opts.store,
    mintToken: (amount, unit = 'sat') => mint.mintTokens(amount, unit),
    async fundKey(amountSat, o = {}) {
      const receipt = await wallet.receive(await mint.mintTokens(amountSat, 'sat'));
      const r = await ledger.createKeyFromDeposit({
        tokenHash: receipt.tokenHash,
        amountMsat: receipt.amountMsat,
        ...(o.expiresAtMs !== undefined ? { expiresAtMs: o.expiresAtMs } : {}),
      });
      if (!r.ok) throw new Error(`createKeyFromDeposit refused: ${r.code}`);
      return { apiKey: r.apiKey, keyId: r.key.keyId, balanceMsat: r.balanceMsat };
    },
    async createKey(amountSat) {
      const r = await post('/wallet/create', { cashu_token: await mint.mintTokens(amountSat, 'sat') });
      expect(r.status).toBe(201);
      const body = (await r.json()) as { api_key: string; key_id: string };
      return { apiKey: body.api_key, keyId: body.key_id };
    },
    async available(credential) {
      const c = credential.startsWith('sk-')
        ? { apiKey: credential }
        : { tokenHash: wallet.tokenHash(credential) };
      return (await ledger.getKeyInfo(c))?.availableMsat ?? null;
    },
    async newWallet(unit = 'sat') {
      const w = new Wallet(mint.url, { unit });
      await w.loadMint();
      return w;
    },
    async redeem(token, unit = 'sat') {
      const w = new Wallet(mint.url, { unit });
      await w.loadMint();
      return (await w.receive(token)).reduce((s, p) => s + Number(p.amount), 0);
    },
    openai: (apiKey, headers = {}) =>
      new OpenAI({ apiKey, baseURL, defaultHeaders: headers, maxRetries: 0, timeout: 20_000 }),
    post,
    async auditOk() {
      const report = await ledger.checkConservation();
      if (!report.ok || report.breaches.length > 0) {
        throw new Error(`ledger audit failed: ${JSON.stringify(report.breaches)}`);
      }
      const solvency = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
      if (!solvency.solvent) {
        throw new Error(
          `wallet insolvent: proofs ${solvency.proofsMsat} msat < user balances ${solvency.userBalancesMsat} msat`,
        );
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await gateway.close(2000);
      await Promise.allSettled([closeMint(), upstream.close()]);
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (filesDir) rmSync(filesDir, { recursive: true, force: true });
      if (prefix) await dropPrefix(process.env.TEST_REDIS_URL!, prefix);
    },
  };
}

/** The change token in the X-Cashu header of an X-Cashu call's answer, which must have `status`. */
export function changeOf(res: Response, status: number): string {
  expect(res.status).toBe(status);
  const change = res.headers.get('x-cashu');
  expect(change).toMatch(/^cashu/);
  return change!;
}

/**
 * One paid gateway for the enclosing describe block (or file): started before its tests (`opts` may be a
 * function, called then, to use what earlier hooks started), audited after each test (`auditOk`, unless
 * `auditEachTest` is false) and closed after all. The answer stands for that gateway: read it inside hooks and
 * tests, never while the block is being declared (nothing is started yet then).
 */
export function paidGatewayPerSuite(
  opts: PaidGatewayOptions | (() => PaidGatewayOptions | Promise<PaidGatewayOptions>),
  { auditEachTest = true }: { auditEachTest?: boolean } = {},
): PaidGateway {
  let started: PaidGateway | undefined;
  beforeAll(async () => {
    started = await startPaidGateway(typeof opts === 'function' ? await opts() : opts);
  });
  if (auditEachTest) {
    afterEach(async () => {
      await started!.auditOk();
    });
  }
  afterAll(async () => {
    await started?.close();
  });
  return lateBound(() => started, 'the paid gateway');
}

/** Deletes every key under a test prefix (SCAN, bounded batches). */
async function dropPrefix(url: string, prefix: string): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await deleteKeys(r, `${prefix}*`, { count: 500, maxRounds: 10_000 });
  } finally {
    r.disconnect();
  }
}
