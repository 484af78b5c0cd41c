import { afterEach, expect } from 'vitest';
import {
  type MockBehaviour,
  type MockUpstream,
  startMockUpstream,
} from '../../bench/upstream/mock-upstream.js';
import { type GatewayProcess, spawnGateway } from '../../scripts/lib/gateway-process.js';
import { type DevMint, type DevMintOptions, startDevMint } from '../../scripts/mint/index.js';
import { type ProcessStore, type ProcessStoreKind, processStore } from './process-store.js';

/**
 * What a test needs to run paid gateways as their own processes (SIGTERM, kill -9, WORKERS, restarts): a dev
 * mint, a mock upstream, a fresh store, the environment every such gateway gets (loopback, a free port, the
 * mint, the upstream, the store) and keys funded from the mint. `close()` kills every gateway it spawned (still
 * running or not) and drops the rest.
 */
export interface PaidProcesses {
  readonly mint: DevMint;
  readonly up: MockUpstream;
  readonly ps: ProcessStore;
  /** A gateway on the mint, upstream and store; `env` adds to (or overrides) the common variables. */
  spawn(env?: Record<string, string>): Promise<GatewayProcess>;
  /** `POST /v1/wallet/create` at `base` with a fresh `sats` token from the mint (201 asserted): the API key. */
  createKey(base: string, sats: number): Promise<string>;
  close(): Promise<void>;
}

/** `POST base + path` with a JSON body and the bearer key (`auth`: an API key). */
export function postJson(base: string, auth: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** A chat call's body small enough for a 1-sat fixed price to be its whole cost. */
export const SMALL_CHAT = { model: 'mock-gpt', messages: [{ role: 'user', content: 'x' }], max_tokens: 4 };

/** A streamed answer (200 asserted) read past its first chunk, so that it is open at the gateway. */
export interface OpenStream {
  /** Reads it to its end: the whole text, the first chunk included. */
  finish(): Promise<string>;
  /** Drops it unread (the connection goes away). */
  cancel(): Promise<void>;
}

export async function openStream(res: Response): Promise<OpenStream> {
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  let text = Buffer.from(first.value ?? []).toString('utf8');
  return {
    async finish() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += Buffer.from(value).toString('utf8');
      }
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
}

/** The store's audit passes and the key made `requests` calls, has nothing left reserved and `balanceMsat` left. */
export async function expectSettled(
  ps: ProcessStore,
  apiKey: string,
  want: { requests: number; balanceMsat: number },
): Promise<void> {
  await ps.withLedger(async (ledger) => {
    expect((await ledger.checkConservation()).breaches).toEqual([]);
    const info = await ledger.getKeyInfo({ apiKey });
    expect(info!.account.requests).toBe(want.requests);
    expect(info!.account.reservedMsat).toBe(0);
    expect(info!.account.balanceMsat).toBe(want.balanceMsat);
  });
}

export async function paidProcesses(
  store: ProcessStoreKind,
  upstream: Partial<MockBehaviour> = {},
  mintOptions: DevMintOptions = {},
): Promise<PaidProcesses> {
  const mint = await startDevMint({ port: 0, ...mintOptions });
  const up = await startMockUpstream(upstream);
  const ps = processStore(store);
  const spawned: GatewayProcess[] = [];
  return {
    mint,
    up,
    ps,
    async spawn(env = {}) {
      const gw = await spawnGateway({
        HOST: '127.0.0.1',
        PORT: '0',
        UPSTREAM_BASE_URL: up.url,
        CASHU_MINTS: mint.url,
        LOG_LEVEL: 'info',
        ...ps.env,
        ...env,
      });
      spawned.push(gw);
      return gw;
    },
    async createKey(base, sats) {
      const created = await fetch(`${base}/v1/wallet/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ cashu_token: await mint.mintTokens(sats) }),
      });
      expect(created.status).toBe(201);
      return ((await created.json()) as { api_key: string }).api_key;
    },
    async close() {
      await Promise.allSettled(spawned.map((g) => g.kill('SIGKILL')));
      await Promise.allSettled([mint.close(), up.close(), ps.drop()]);
    },
  };
}

/**
 * For a describe block whose tests each start their own processes: registers an `afterEach` that closes what
 * they started, and returns the `paidProcesses` a test calls.
 */
export function paidProcessesPerTest(): typeof paidProcesses {
  const started: PaidProcesses[] = [];
  afterEach(async () => {
    for (const rig of started.splice(0)) await rig.close();
  });
  return async (...args) => {
    const rig = await paidProcesses(...args);
    started.push(rig);
    return rig;
  };
}
