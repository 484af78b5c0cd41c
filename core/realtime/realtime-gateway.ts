import { randomUUID } from 'node:crypto';
import { type RawData, WebSocket } from 'ws';
import { creditToken } from '../account/credit-token.js';
import { isCashuToken, parseCredential } from '../auth/credentials.js';
import { allowListPermits, clientAddress, compileIpList } from '../auth/ip-match.js';
import { GatewayError, toGatewayError } from '../errors.js';
import type { UpgradeHandler, WebSocketUpgrade } from '../http/exchange.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import { ownedId } from '../ledger/owner.js';
import type { Credential } from '../ledger/types.js';
import type { Logger } from '../log.js';
import { realtimeSessionsOpen, recordRealtimeSession } from '../metrics.js';
import type { Provider } from '../providers/types.js';
import type { Services } from '../service-types.js';
import { CLOSE } from './close-codes.js';
import { RealtimePricer } from './realtime-pricer.js';
import { RealtimeSession, type SessionLimits, type SessionSummary } from './session.js';

/**
 * `GET /v1/realtime?model=…` with `Upgrade: websocket` (README "Realtime"), on either engine (the upgrade and the
 * accepted socket are core/http/exchange.ts's `WebSocketUpgrade` and `MessageSocket`): authenticates the caller, reserves
 * the session's first response, opens the gateway's own WebSocket to the provider (its base URL, the
 * operator's key) and only then completes the client's upgrade; from there a `RealtimeSession` relays and
 * meters. Every refusal before the upgrade is an HTTP answer with the error envelope (401, 402, 404, 429,
 * 502…), so nothing is relayed and nothing charged.
 *
 * Credentials: `Authorization: Bearer sk-…|cashu…` (or `x-api-key`), or the `openai-insecure-api-key.<key>`
 * subprotocol browsers use (never echoed back: the gateway answers with the `realtime` subprotocol when it
 * was offered). Session limits (REALTIME_SESSIONS_PER_KEY, _PER_IP) are counted per process.
 */

/** Output tokens a response may have when the session sets no lower maximum (`inf` is clamped to it). */
export const REALTIME_MAX_OUTPUT_TOKENS = 4096;
/** How long a closing session waits for the provider's `response.done` of a response in flight. */
const DRAIN_MS = 30_000;
const KEY_PROTOCOL = 'openai-insecure-api-key.';
const UPSTREAM_MAX_PAYLOAD = 64 * 1024 * 1024;
const UPSTREAM_HANDSHAKE_MS = 10_000;

export interface RealtimeGateway {
  /** The engines' `ListenOptions.onUpgrade`. */
  readonly handleUpgrade: UpgradeHandler;
  /** Sessions open now. */
  readonly openSessions: number;
  /** Refuses new sessions and ends the open ones with 1001 after settling them (within `graceMs`). */
  close(graceMs: number): Promise<boolean>;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the Realtime gateway's closure: its open sessions, credential checks and settlement share one state; each inner function is short
export function createRealtime(services: Services, log: Logger): RealtimeGateway | undefined {
  const { ledger, pricing, config, catalog, providers, wallet } = services;
  if (ledger === undefined || pricing === undefined) return undefined;
  const rc = config.realtime;
  const trusted = compileIpList(config.trustedProxies);
  const sessions = new Set<RealtimeSession>();
  const perKey = new Map<string, number>();
  const perIp = new Map<string, number>();
  let closing = false;
  const limits: SessionLimits = {
    idleTimeoutMs: rc.idleTimeoutMs,
    maxSessionMs: rc.maxSessionMs,
    maxBufferedBytes: rc.maxBufferedBytes,
    slowReaderMs: rc.slowReaderMs,
    audioTokensPerSecond: rc.audioTokensPerSecond,
    audioAllowanceMs: rc.audioAllowanceMs,
    drainMs: DRAIN_MS,
  };
  /** The subprotocol answered: `realtime` when offered, else the first that is not the key's, else none. */
  function protocolOf(up: WebSocketUpgrade): string | undefined {
    const offered = (up.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '');
    if (offered.includes('realtime')) return 'realtime';
    return offered.find((p) => !p.startsWith(KEY_PROTOCOL));
  }

  const count = (m: Map<string, number>, k: string, d: number) => {
    const n = (m.get(k) ?? 0) + d;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
  };

  /** The request's credential: the Authorization/x-api-key header, else the key subprotocol. */
  function credentialOf(up: WebSocketUpgrade) {
    const headers: Record<string, string> = { ...up.headers };
    if (headers.authorization === undefined && headers['x-api-key'] === undefined) {
      const key = (headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((p) => p.trim())
        .find((p) => p.startsWith(KEY_PROTOCOL));
      if (key !== undefined) headers.authorization = `Bearer ${key.slice(KEY_PROTOCOL.length)}`;
    }
    delete headers['x-cashu'];
    return parseCredential({ method: 'GET', headers });
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: an upgrade's checks in the order a client meets them (path, credential, model, reservation), then the session's event wiring
  async function open(up: WebSocketUpgrade): Promise<void> {
    if (up.path !== '/v1/realtime') {
      throw new GatewayError('not_found', { message: `No WebSocket route for ${up.path}` });
    }
    if (closing) throw new GatewayError('service_unavailable', { message: 'The gateway is shutting down' });
    const model = new URLSearchParams(up.rawQuery).get('model') ?? '';
    if (model === '') throw new GatewayError('invalid_request', { message: 'model is required (?model=…)' });
    if (catalog.list().length > 0 && catalog.get(model) === undefined) {
      throw new GatewayError('not_found', { message: `Unknown model: ${model}` });
    }
    const cred = credentialOf(up);
    if (cred === undefined) throw new GatewayError('missing_credentials');
    // An L402 / MPP credential pays calls, not sessions (yet): a session needs a key or an eCash token.
    if (cred.kind === 'door') {
      throw new GatewayError('invalid_api_key', {
        message:
          'Realtime sessions are paid with an sk- key or an eCash token; an L402 or MPP credential is not accepted here',
      });
    }
    if (cred.kind !== 'api_key' && !isCashuToken(cred.token)) throw new GatewayError('invalid_api_key');
    const ip = clientAddress(up.remoteAddress, up.headers['x-forwarded-for'], trusted);
    let credential: Credential;
    let step = 1;
    if (cred.kind === 'api_key') credential = { apiKey: cred.apiKey };
    else {
      if (wallet === undefined) {
        throw new GatewayError('invalid_api_key', { message: 'eCash payment is not enabled on this node' });
      }
      const decoded = wallet.decodeToken(cred.token);
      await creditToken({ ledger: ledger!, wallet }, cred.token, { kind: 'token' });
      credential = { tokenHash: decoded.tokenHash };
      step = decoded.unit === 'msat' ? 1 : 1000;
    }
    const keyName = 'apiKey' in credential ? credential.apiKey : credential.tokenHash;
    if ((perKey.get(keyName) ?? 0) >= rc.sessionsPerKey || (perIp.get(ip) ?? 0) >= rc.sessionsPerIp) {
      throw new GatewayError('too_many_sessions', { headers: { 'retry-after': '1' } });
    }
    count(perKey, keyName, 1);
    count(perIp, ip, 1);
    let counted = true;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      count(perKey, keyName, -1);
      count(perIp, ip, -1);
    };
    let reserved: { accountId: string; id: string } | undefined;
    let upstream: WebSocket | undefined;
    try {
      // Throws not_found / model_not_priced / price_unavailable before any money moves; fixes the BTC price.
      const provider = providers.serving(model)[0] ?? providers.list[0];
      if (provider === undefined) {
        throw new GatewayError('upstream_error', { message: 'No provider serves this model' });
      }
      // The serving provider's own prices when the providers file gives it some (model-based pricing).
      const rates =
        pricing!.mode === 'model' && providers.priced
          ? providers.chargeRates(model, provider.spec.name, catalog.usdRates(model))
          : undefined;
      const quote = pricing!.reservation({
        model,
        endpoint: 'chat',
        promptTokensBound: 0,
        maxTokens: 1,
        ...(rates !== undefined ? { rates } : {}),
      });
      const pricer = new RealtimePricer(pricing!, model, quote.btcUsd, step, rates);
      const allowanceTokens = Math.ceil((rc.audioAllowanceMs * rc.audioTokensPerSecond) / 1000);
      const minMsat = pricer.responseBound(0, REALTIME_MAX_OUTPUT_TOKENS);
      const maxMsat = Math.max(minMsat, pricer.responseBound(allowanceTokens, REALTIME_MAX_OUTPUT_TOKENS));
      const id = ownedId('r');
      const r = await ledger!.admit({
        credential,
        requestId: id,
        model,
        clientIp: ip,
        maxMsat,
        minMsat,
        expiresInMs: rc.maxSessionMs + config.reservationExpiryMs,
        limits: config.limits,
        exactPath: true,
      });
      if (!r.ok) throw ledgerRefusalToError(r);
      reserved = { accountId: r.accountId, id };
      if (!allowListPermits(r.key.allowedIps, ip)) throw new GatewayError('ip_not_allowed');
      const connected = await connectUpstream(provider, model, up.headers['openai-beta']);
      upstream = connected.ws;
      const { early, hold } = connected;
      if (up.aborted) throw new GatewayError('invalid_request', { message: 'the client left' });
      const upstreamWs = upstream;
      const first = { id, msat: r.reservedMsat };
      const accountId = r.accountId;
      // A client gone before its upgrade completes (the engine then never opens it): what was reserved and
      // opened for it is given back.
      up.onAborted(() => {
        uncount();
        upstreamWs.terminate();
        ledger!.release({ accountId, requestId: id }).catch((err: unknown) => {
          log.error({ err }, 'realtime: releasing the reservation of a client gone at the upgrade failed');
        });
      });
      up.accept(protocolOf(up), (client) => {
        upstreamWs.off('message', hold);
        const sessionId = randomUUID();
        realtimeSessionsOpen.inc();
        const session = new RealtimeSession(
          {
            ledger: ledger!,
            pricer,
            limits,
            reservationExpiryMs: config.reservationExpiryMs,
            log,
            maxOutputTokens: REALTIME_MAX_OUTPUT_TOKENS,
          },
          { id: sessionId, accountId, credential, first },
          client,
          upstreamWs,
          (s) => ended(s, session),
        );
        sessions.add(session);
        const ended = (s: SessionSummary, it: RealtimeSession) => {
          sessions.delete(it);
          uncount();
          realtimeSessionsOpen.dec();
          recordRealtimeSession(s.seconds, s.chargedMsat);
          services.audit?.record({
            atMs: Date.now(),
            requestId: s.id,
            subject: { credential },
            endpoint: '/v1/realtime',
            method: 'GET',
            ip,
            userAgent: up.headers['user-agent'],
            costMsat: s.chargedMsat,
            status: 101,
          });
          log.info(
            { session: s.id, responses: s.responses, msats: s.chargedMsat, close: s.closeCode },
            'realtime session ended',
          );
        };
        session.replay(early);
      });
    } catch (err) {
      uncount();
      upstream?.terminate();
      if (reserved !== undefined) {
        await ledger!
          .release({ accountId: reserved.accountId, requestId: reserved.id })
          .catch(() => undefined);
      }
      throw err;
    }
  }

  /** The gateway's own WebSocket to `provider` for `model`, open (or a 502). */
  function connectUpstream(
    provider: Provider,
    model: string,
    beta: string | undefined,
  ): Promise<{ ws: WebSocket; early: [RawData, boolean][]; hold: (d: RawData, b: boolean) => void }> {
    const base = provider.spec.baseUrl.replace(/^http/, 'ws').replace(/\/+$/, '');
    const headers: Record<string, string> = { ...provider.spec.headers };
    if (provider.spec.apiKey !== undefined) headers.authorization = `Bearer ${provider.spec.apiKey}`;
    if (beta !== undefined) headers['openai-beta'] = beta;
    const ws = new WebSocket(`${base}/realtime?model=${encodeURIComponent(model)}`, {
      headers,
      perMessageDeflate: false,
      maxPayload: UPSTREAM_MAX_PAYLOAD,
      handshakeTimeout: UPSTREAM_HANDSHAKE_MS,
    });
    return new Promise((resolve, reject) => {
      const fail = (why: string) => {
        ws.removeAllListeners();
        ws.on('error', () => undefined);
        ws.terminate();
        reject(
          new GatewayError('upstream_error', {
            message: `The provider's Realtime socket did not open: ${why}`,
          }),
        );
      };
      ws.once('open', () => {
        ws.removeAllListeners();
        // Until the session listens (its own handler replaces this one).
        ws.on('error', () => undefined);
        // What the provider sends from now on is kept until the session listens: its first frames can come
        // with the handshake's answer, before any promise continuation runs.
        const early: [RawData, boolean][] = [];
        const hold = (d: RawData, b: boolean) => early.push([d, b]);
        ws.on('message', hold);
        resolve({ ws, early, hold });
      });
      ws.once('unexpected-response', (_r, res) => {
        res.resume();
        fail(`HTTP ${res.statusCode ?? 0}`);
      });
      ws.once('error', (err) => fail(err.message));
    });
  }

  function refuse(up: WebSocketUpgrade, err: unknown): void {
    const ge = toGatewayError(err);
    if (ge.code === 'internal_error') log.error({ err: ge.cause ?? ge }, 'realtime upgrade failed');
    up.refuse(
      ge.status,
      { 'content-type': 'application/json', ...ge.headers },
      JSON.stringify(ge.toEnvelope()),
    );
  }

  return {
    handleUpgrade: {
      maxMessageBytes: rc.maxFrameBytes,
      handle(up) {
        open(up).catch((err) => refuse(up, err));
      },
    },
    get openSessions() {
      return sessions.size;
    },
    async close(graceMs) {
      closing = true;
      const all = [...sessions].map((s) => s.close(CLOSE.goingAway, 'server shutting down'));
      if (all.length === 0) return true;
      let timer: NodeJS.Timeout | undefined;
      const ok = await Promise.race([
        Promise.all(all).then(() => true),
        new Promise<boolean>((r) => {
          timer = setTimeout(() => r(false), graceMs);
        }),
      ]);
      clearTimeout(timer);
      return ok;
    },
  };
}
