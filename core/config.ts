import { existsSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { parseRelayPaths, type RelayPath } from './relay-paths.js';
import { type RedisConfig, readRedisConfig } from './store/redis-config.js';
/** How a call's providers are ordered (core/providers/providers.ts). */

/**
 * Operator configuration, read once from the environment at start-up and validated. Every variable here is
 * listed in the README's configuration table (a test checks that). Invalid values stop the start with a
 * message naming the variable; secrets are never echoed.
 */

export type HttpEngine = 'uws' | 'node';

export interface Config {
  port: number;
  host: string;
  /** Requested engine; `uws` falls back to `node` (one log line) when the uWS binary cannot load. */
  httpEngine: HttpEngine;
  upstreamBaseUrl: string;
  upstreamApiKey: string | undefined;
  upstreamTimeoutMs: number;
  upstreamConnections: number;
  /** A streamed call whose client left: how long the gateway reads on for the provider's usage, ms. */
  abandonedDrainMs: number;
  /** Providers file (JSON); absent = the one provider UPSTREAM_BASE_URL names. */
  providersPath: string | undefined;
  /** A routing policy name: built-in, or registered by a plugin (checked once the plugins are built). */
  routingPolicy: string;
  providerMaxAttempts: number;
  providerBreaker: { failures: number; cooldownMs: number };
  adminPassword: string | undefined;
  /** Console sessions (POST /admin/login) last this long, hours. */
  adminSessionHours: number;
  /** Bearer token /metrics requires; unset: /metrics answers loopback clients only. */
  metricsToken: string | undefined;
  maxBodyBytes: number;
  /** Largest request head node:http accepts (431 above); uWS keeps its own fixed limit. */
  maxHeaderBytes: number;
  /** How long a shutdown (SIGTERM/SIGINT) lets requests in flight finish and settle. */
  shutdownGraceMs: number;
  /** A process silent this long is dead: its reservations and holds are released by a live one (0: off). */
  orphanReleaseMs: number;
  /** Credit leases (docs/ledger.md): admit and settle paid calls in memory against a leased slice. */
  leases: { enabled: boolean; flushMs: number; idleMs: number; ttlMs: number };
  /** node:http: the request head must arrive within this (408 after); also bounds a silent new connection. */
  headersTimeoutMs: number;
  /** node:http: the whole body must arrive within this after the head (408 after). */
  bodyTimeoutMs: number;
  /** node:http: an idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** node:http: connections beyond this are closed at once (0: no cap). */
  maxConnections: number;
  corsOrigins: string[];
  trustedProxies: string[];
  logLevel: string;
  /** Ordered plugin names of the paid-call pipeline. */
  pipeline: string[];
  /**
   * NODE_COST_UPSTREAM: a call served by a node paid from the wallet (`"payment": "cashu"` / `"cashu-balance"`)
   * shows what it cost the operator there in its `x-node-cost` block (`upstream_msats`). Off by default: every
   * caller would see the reseller's cost.
   */
  nodeCostUpstream: boolean;
  /** RELAY_PATHS: the extra `/v1/*` paths the catch-all relays, each with its price (core/relay-paths.ts). */
  relayPaths: RelayPath[];
  /**
   * CLAMP_MAX_TOKENS: when the caller set no max_tokens and the balance cannot cover the model's maximum,
   * forward the max_tokens the balance affords (true) instead of answering 402 with `affordable_max_tokens`.
   */
  clampMaxTokens: boolean;
  /**
   * HOSTED_TOOL_CALLS_MAX: the most server-side tool calls (web search, image generation, code interpreter, file
   * search) a call that declares such a tool and sets no limit of its own is reserved for; the gateway forwards it
   * as the Responses `max_tool_calls` (Anthropic: each server tool's `max_uses`) so the provider keeps to it.
   */
  hostedToolCallsMax: number;
  /**
   * STORED_CONTEXT_MAX_TOKENS: the input tokens the bound allows for stored context the gateway did not see (a
   * stored `prompt`, a `conversation`, a stored response recorded without its tokens). Unset: such calls are
   * refused with 400 `context_not_bounded`.
   */
  storedContextMaxTokens: number | undefined;
  /**
   * IMAGE_MAX_TOKENS: the input tokens one image is bounded at on a model whose image formula is not known (no
   * models.json `image_tokens`, no built-in rule: core/metering/image-bound.ts).
   */
  imageMaxTokens: number;
  /**
   * REFERENCE_MAX_TOKENS: the input tokens the bound allows for each file a call refers to by id or URL (the
   * provider fetches and bills it; the gateway does not see it). Unset: such calls are refused with 400
   * `reference_not_bounded`.
   */
  referenceMaxTokens: number | undefined;
  /**
   * WEB_SEARCH_CONTENT_TOKENS: the input tokens the bound adds per web search call a call may make, for the search
   * results the provider reads as input (OpenAI bills a fixed 8,000-token block per call on its mini models).
   */
  webSearchContentTokens: number;
  /** Gateway processes on the port (WORKERS; `auto` = the machine's cores). */
  workers: number;
  /** JSON file: PIPELINE entry → its options (plugin kit). */
  pipelineConfigPath: string | undefined;
  node: { name: string; description: string; npub: string };
  modelsPath: string | undefined;
  // store
  /** The Redis of the money store (one form of three, core/store/redis-config.ts); absent = embedded SQLite. */
  redis: RedisConfig | undefined;
  redisPrefix: string;
  dataDir: string;
  /** SQLite: WAL checkpoints in a worker thread every this many ms; 0 = SQLite's own, inside a commit. */
  sqliteCheckpointMs: number;
  // money
  pricing: {
    fixed: boolean;
    /**
     * sats per request (fixed mode) or base fee per request (token and model mode). Default 1 in fixed and
     * token mode; 0 in model mode, where the formula (docs/pricing.md) has no base fee unless the operator
     * sets one.
     */
    costPerRequestSats: number;
    per1kInputSats: number | undefined;
    per1kOutputSats: number | undefined;
    exchangeFee: number;
    upstreamProviderFee: number;
    /** Pinned BTC price in USD; disables the exchange tickers. */
    btcUsdPrice: number | undefined;
    btcPriceMaxAgeMs: number;
    btcPriceSources: string[];
  };
  childKeyCostMsats: number;
  limits: { requestsPerMinute: number; tokensPerHour: number; concurrent: number };
  /** Callers with no usable credential, per client IP (docs/endpoints.md, "Request limits"). */
  ipLimits: { perMinute: number; perHour: number; perDay: number };
  /** Failed admin logins per client IP per minute; then 429 until the window passes. */
  adminLoginAttemptsPerMinute: number;
  /** Audit records older than this are pruned (hourly). */
  auditRetentionDays: number;
  reservationExpiryMs: number;
  /** Realtime sessions over WebSocket (core/realtime/, README "Realtime"). */
  realtime: {
    /** REALTIME_SESSIONS_PER_KEY / REALTIME_SESSIONS_PER_IP: open sessions at once, per process. */
    sessionsPerKey: number;
    sessionsPerIp: number;
    /** REALTIME_IDLE_TIMEOUT_MS: a session the client sent nothing in for this long is closed (4000). */
    idleTimeoutMs: number;
    /** REALTIME_MAX_SESSION_MS: a session is closed after this long (4001). */
    maxSessionMs: number;
    /** REALTIME_MAX_FRAME_BYTES: a bigger client frame closes the session (1009). */
    maxFrameBytes: number;
    /** REALTIME_MAX_BUFFERED_BYTES: bytes queued towards a slow reader before the other side is paused. */
    maxBufferedBytes: number;
    /** REALTIME_SLOW_READER_MS: a reader that stays over the buffer bound this long is closed (4008). */
    slowReaderMs: number;
    /** REALTIME_AUDIO_TOKENS_PER_SECOND: audio tokens a second of audio is reserved at (an upper bound). */
    audioTokensPerSecond: number;
    /** REALTIME_AUDIO_ALLOWANCE_MS: audio reserved for ahead of what was appended (fewer reservation steps). */
    audioAllowanceMs: number;
  };
  /**
   * CASHU_MINTS, CASHU_SEED; WALLET_RECOVERY_MS: how often the wallet's recovery pass runs (sends left ambiguous
   * by a mint outage, payouts another process left pending at the mint).
   */
  cashu: {
    mints: string[];
    seed: string | undefined;
    recoveryMs: number;
    /**
     * INSTANCE_NAME: this gateway's name as the owner of wallet journal entries, stable across restarts (default
     * `<hostname>:<PORT>`; undefined with PORT=0: the process is an instance of its own).
     */
    instanceName: string | undefined;
  };
  /** eCash from mints not in CASHU_MINTS: refused, or swapped to the primary mint over Lightning. */
  foreignMints: { mode: 'refuse' | 'swap'; maxFeePercent: number; maxSats: number };
  /** Lightning deposits (POST /v1/wallet/create/lightning, /v1/wallet/topup/lightning). */
  lightning: { minSats: number; maxSats: number; pollMs: number; createPerMinute: number };
  /**
   * The payment doors an unpaid call's 402 offers (core/doors/, docs/paying.md): PAYMENT_DOORS (`cashu`, `l402`,
   * `mpp`), L402_MIN_SATS (the smallest invoice offered), L402_EXPIRY_S (how long an L402 token pays calls),
   * MPP_CLOSE_TAKEOVER_MS (how old an MPP close's claim with no payout under way is before another close takes it
   * over).
   */
  doors: {
    offered: Array<'cashu' | 'l402' | 'mpp'>;
    minSats: number;
    l402ExpiryS: number;
    closeTakeoverMs: number;
  };
  /** Webhooks and alerts (core/events/). */
  webhooks: {
    maxAttempts: number;
    timeoutMs: number;
    allowPrivateUrls: boolean;
    retryBaseMs: number;
    pollMs: number;
    alertSweepMs: number;
  };
  /** Refunds to a key's Lightning address (core/account/lightning-refund.ts). */
  refunds: {
    /** LIGHTNING_ADDRESS_ALLOW_PRIVATE: addresses may resolve to private or loopback hosts, reached over http. */
    allowPrivateAddresses: boolean;
    /** LIGHTNING_ADDRESS_TIMEOUT_MS: each LNURL-pay request (address, callback). */
    timeoutMs: number;
    /** EXPIRED_KEY_SWEEP: expired keys with a balance and a refund address are paid there. */
    sweep: boolean;
    /** EXPIRED_KEY_SWEEP_MS: how often the sweep looks for due keys, and its first retry delay. */
    sweepMs: number;
  };
  /** The Batch API and Files (core/batches/): limits, the batch price and the settlement watcher. */
  batches: {
    /** Lines a batch input file may have (BATCH_MAX_LINES). */
    maxLines: number;
    /** Batch price multiplier of models whose pricing names no `batch` (decimal string, BATCH_PRICE_FACTOR). */
    priceFactor: string;
    /** How often the watcher polls each open batch at the provider (BATCH_POLL_MS). */
    pollMs: number;
    /**
     * Polls of the provider's batch list (one per BATCH_POLL_MS) looking for a batch whose creation had no clear
     * answer before its reservation is released (BATCH_RECONCILE_POLLS).
     */
    reconcilePolls: number;
    /** Uploads with a purpose other than `batch` are relayed (FILES_OTHER_PURPOSES). */
    otherPurposes: boolean;
    /** Largest `POST /v1/files` request body (FILES_MAX_BYTES): streamed through, never held whole. */
    filesMaxBytes: number;
  };
  /** The node on the Nostr network (core/network/, docs/network.md). */
  network: {
    /** NOSTR_NSEC; absent: a key made once and kept in the money store. Never logged. */
    nsec: string | undefined;
    relays: string[];
    /** The listing's `u` tags: where clients reach this node. */
    publicUrls: string[];
    /** The listing's `d` tag; absent: the first 12 hex characters of the public key. */
    nodeId: string | undefined;
    refreshMs: number;
    /** How often a change of models, prices or mints is looked for. */
    checkMs: number;
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, def: string): string {
  const v = env[name];
  return v === undefined || v === '' ? def : v;
}

function optStr(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function num(env: Env, name: string, def: number, opts: { min?: number; int?: boolean } = {}): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const v = Number(raw);
  if (!Number.isFinite(v)) throw new ConfigError(`${name} must be a number`);
  if (opts.int && !Number.isInteger(v)) throw new ConfigError(`${name} must be an integer`);
  if (opts.min !== undefined && v < opts.min) throw new ConfigError(`${name} must be >= ${opts.min}`);
  return v;
}

/** A positive decimal multiplier kept as a string (priced exactly, never as a float). */
function decimalFactor(env: Env, name: string, def: string): string {
  const v = str(env, name, def);
  if (!/^\d+(\.\d+)?$/.test(v) || Number(v) <= 0) throw new ConfigError(`${name} must be a decimal > 0`);
  return v;
}

function optNum(env: Env, name: string, opts: { min?: number } = {}): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  return num(env, name, 0, opts);
}

function optInt(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  return num(env, name, 0, { min: 0, int: true });
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false`);
}

function list(env: Env, name: string, def: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function url(env: Env, name: string, def: string): string {
  const v = str(env, name, def);
  try {
    new URL(v);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL`);
  }
  return v.replace(/\/+$/, '');
}

function redisFrom(env: Env): RedisConfig | undefined {
  try {
    return readRedisConfig(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

export const DEFAULT_PIPELINE = [
  'auth',
  'rate-limit',
  'reserve',
  'relay',
  'owner',
  'meter',
  'settle',
  'change-token',
];

/**
 * ENV_FILE (default `.env` in the working directory): when the file exists, its variables are read into the
 * environment before the configuration is (Node's process.loadEnvFile; a variable already set in the environment
 * wins). The gateway (`npm start`) and the operator tools (wallet:*, audit, models:sync, nostr:listing,
 * nodes:discover) call this first, so one file configures them all. Returns the path read, if any; an ENV_FILE
 * that names a missing file is a ConfigError.
 */
export function readEnvFile(env: Env = process.env): string | undefined {
  const named = optStr(env, 'ENV_FILE');
  const path = named ?? '.env';
  if (!existsSync(path)) {
    if (named) throw new ConfigError(`ENV_FILE names ${named}, which does not exist`);
    return undefined;
  }
  try {
    process.loadEnvFile(path);
  } catch (err) {
    throw new ConfigError(`${path} could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  return path;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one line per setting, in the order of the README's configuration table; a flat list, not logic
export function loadConfig(env: Env = process.env): Config {
  const doorsOffered = list(env, 'PAYMENT_DOORS', ['cashu', 'l402', 'mpp']);
  for (const d of doorsOffered)
    if (d !== 'cashu' && d !== 'l402' && d !== 'mpp')
      throw new ConfigError('PAYMENT_DOORS must list cashu, l402 and/or mpp');
  const foreignMode = str(env, 'FOREIGN_MINTS', 'refuse');
  if (foreignMode !== 'refuse' && foreignMode !== 'swap')
    throw new ConfigError('FOREIGN_MINTS must be refuse or swap');
  const routingPolicy = str(env, 'ROUTING_POLICY', 'priority');
  if (!/^[a-z0-9][a-z0-9_-]{0,62}$/i.test(routingPolicy)) {
    throw new ConfigError(
      "ROUTING_POLICY must be a routing policy name (priority, weighted, cheapest, latency, or a plugin's)",
    );
  }
  let relayPaths: RelayPath[];
  try {
    relayPaths = parseRelayPaths(optStr(env, 'RELAY_PATHS'));
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  // Model mode (core/pricing/types.ts pricingMode): FIXED_PRICING=false without both per-1k token prices.
  const modelMode =
    !bool(env, 'FIXED_PRICING', true) &&
    optNum(env, 'FIXED_PER_1K_INPUT_TOKENS', { min: 0 }) === undefined &&
    optNum(env, 'FIXED_PER_1K_OUTPUT_TOKENS', { min: 0 }) === undefined;
  const workersRaw = str(env, 'WORKERS', '1');
  const workers =
    workersRaw === 'auto' ? availableParallelism() : num(env, 'WORKERS', 1, { min: 1, int: true });
  const engine = str(env, 'HTTP_ENGINE', 'node');
  if (engine !== 'uws' && engine !== 'node') throw new ConfigError('HTTP_ENGINE must be uws or node');
  if (workers > 1 && engine === 'uws') {
    throw new ConfigError(
      'WORKERS > 1 runs node:cluster workers, which share the port through node:http: use HTTP_ENGINE=node',
    );
  }
  const mints = list(env, 'CASHU_MINTS', []).map((m) => m.replace(/\/+$/, ''));
  for (const m of mints) {
    try {
      new URL(m);
    } catch {
      throw new ConfigError('CASHU_MINTS must be a comma-separated list of absolute URLs');
    }
  }
  // Token pricing needs both sides: one side left unset would be free without anyone deciding so.
  const tokenIn = env.FIXED_PER_1K_INPUT_TOKENS !== undefined && env.FIXED_PER_1K_INPUT_TOKENS !== '';
  const tokenOut = env.FIXED_PER_1K_OUTPUT_TOKENS !== undefined && env.FIXED_PER_1K_OUTPUT_TOKENS !== '';
  if (tokenIn !== tokenOut && !bool(env, 'FIXED_PRICING', true)) {
    throw new ConfigError(
      `${tokenIn ? 'FIXED_PER_1K_OUTPUT_TOKENS' : 'FIXED_PER_1K_INPUT_TOKENS'} is not set while ${tokenIn ? 'FIXED_PER_1K_INPUT_TOKENS' : 'FIXED_PER_1K_OUTPUT_TOKENS'} is: set both (0 makes a side free on purpose), or neither for model-based pricing`,
    );
  }
  return {
    port: num(env, 'PORT', 8000, { min: 0, int: true }),
    host: str(env, 'HOST', '0.0.0.0'),
    httpEngine: engine,
    upstreamBaseUrl: url(env, 'UPSTREAM_BASE_URL', 'http://127.0.0.1:11434/v1'),
    upstreamApiKey: optStr(env, 'UPSTREAM_API_KEY'),
    upstreamTimeoutMs: num(env, 'UPSTREAM_TIMEOUT_MS', 300_000, { min: 1, int: true }),
    upstreamConnections: num(env, 'UPSTREAM_CONNECTIONS', 256, { min: 1, int: true }),
    abandonedDrainMs: num(env, 'ABANDONED_DRAIN_MS', 5_000, { min: 0, int: true }),
    providersPath: optStr(env, 'PROVIDERS_PATH'),
    routingPolicy,
    providerMaxAttempts: num(env, 'PROVIDER_MAX_ATTEMPTS', 2, { min: 1, int: true }),
    providerBreaker: {
      failures: num(env, 'PROVIDER_BREAKER_FAILURES', 5, { min: 1, int: true }),
      cooldownMs: num(env, 'PROVIDER_BREAKER_COOLDOWN_MS', 30_000, { min: 100, int: true }),
    },
    adminPassword: optStr(env, 'ADMIN_PASSWORD'),
    adminSessionHours: num(env, 'ADMIN_SESSION_HOURS', 12, { min: 0.01 }),
    metricsToken: optStr(env, 'METRICS_TOKEN'),
    maxBodyBytes: num(env, 'MAX_BODY_BYTES', 10 * 1024 * 1024, { min: 1, int: true }),
    maxHeaderBytes: num(env, 'MAX_HEADER_BYTES', 64 * 1024, { min: 1024, int: true }),
    shutdownGraceMs: num(env, 'SHUTDOWN_GRACE_MS', 30_000, { min: 0, int: true }),
    orphanReleaseMs: num(env, 'ORPHAN_RELEASE_MS', 30_000, { min: 0, int: true }),
    leases: {
      enabled: bool(env, 'LEDGER_LEASES', true),
      flushMs: num(env, 'LEASE_FLUSH_MS', 50, { min: 1, int: true }),
      idleMs: num(env, 'LEASE_IDLE_MS', 1000, { min: 1, int: true }),
      ttlMs: num(env, 'LEASE_TTL_MS', 10_000, { min: 100, int: true }),
    },
    headersTimeoutMs: num(env, 'HEADERS_TIMEOUT_MS', 20_000, { min: 100, int: true }),
    bodyTimeoutMs: num(env, 'BODY_TIMEOUT_MS', 60_000, { min: 100, int: true }),
    keepAliveTimeoutMs: num(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000, { min: 100, int: true }),
    maxConnections: num(env, 'MAX_CONNECTIONS', 10_000, { min: 0, int: true }),
    corsOrigins: list(env, 'CORS_ORIGINS', ['*']),
    trustedProxies: list(env, 'TRUSTED_PROXIES', []),
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    pipeline: list(env, 'PIPELINE', DEFAULT_PIPELINE),
    nodeCostUpstream: bool(env, 'NODE_COST_UPSTREAM', false),
    relayPaths,
    clampMaxTokens: bool(env, 'CLAMP_MAX_TOKENS', false),
    hostedToolCallsMax: num(env, 'HOSTED_TOOL_CALLS_MAX', 1, { min: 1, int: true }),
    storedContextMaxTokens: optInt(env, 'STORED_CONTEXT_MAX_TOKENS'),
    imageMaxTokens: num(env, 'IMAGE_MAX_TOKENS', 3000, { min: 1, int: true }),
    referenceMaxTokens: optInt(env, 'REFERENCE_MAX_TOKENS'),
    webSearchContentTokens: num(env, 'WEB_SEARCH_CONTENT_TOKENS', 8000, { min: 0, int: true }),
    workers,
    pipelineConfigPath: optStr(env, 'PIPELINE_CONFIG'),
    node: {
      name: str(env, 'NODE_NAME', 'Prepaid Model Gateway'),
      description: str(env, 'NODE_DESCRIPTION', 'OpenAI-compatible gateway paid with Cashu eCash'),
      npub: str(env, 'NODE_NPUB', ''),
    },
    modelsPath: optStr(env, 'MODELS_PATH'),
    redis: redisFrom(env),
    redisPrefix: str(env, 'REDIS_PREFIX', 'gw'),
    dataDir: str(env, 'DATA_DIR', './data'),
    sqliteCheckpointMs: num(env, 'SQLITE_CHECKPOINT_MS', 500, { min: 0, int: true }),
    pricing: {
      fixed: bool(env, 'FIXED_PRICING', true),
      costPerRequestSats: num(env, 'FIXED_COST_PER_REQUEST', modelMode ? 0 : 1, { min: 0 }),
      per1kInputSats: optNum(env, 'FIXED_PER_1K_INPUT_TOKENS', { min: 0 }),
      per1kOutputSats: optNum(env, 'FIXED_PER_1K_OUTPUT_TOKENS', { min: 0 }),
      exchangeFee: num(env, 'EXCHANGE_FEE', 1.005, { min: 0 }),
      upstreamProviderFee: num(env, 'UPSTREAM_PROVIDER_FEE', 1.05, { min: 0 }),
      btcUsdPrice: optNum(env, 'BTC_USD_PRICE', { min: 0 }),
      btcPriceMaxAgeMs: num(env, 'BTC_PRICE_MAX_AGE_MS', 10 * 60_000, { min: 1, int: true }),
      btcPriceSources: list(env, 'BTC_PRICE_SOURCES', ['coinbase', 'kraken', 'bitstamp']),
    },
    childKeyCostMsats: num(env, 'CHILD_KEY_COST_MSATS', 0, { min: 0, int: true }),
    limits: {
      requestsPerMinute: num(env, 'RATE_LIMIT_REQUESTS_PER_MINUTE', 1000, { min: 1, int: true }),
      tokensPerHour: num(env, 'RATE_LIMIT_TOKENS_PER_HOUR', 1_000_000, { min: 1, int: true }),
      concurrent: num(env, 'RATE_LIMIT_CONCURRENT', 10, { min: 1, int: true }),
    },
    ipLimits: {
      perMinute: num(env, 'RATE_LIMIT_IP_PER_MINUTE', 60, { min: 1, int: true }),
      perHour: num(env, 'RATE_LIMIT_IP_PER_HOUR', 1000, { min: 1, int: true }),
      perDay: num(env, 'RATE_LIMIT_IP_PER_DAY', 10_000, { min: 1, int: true }),
    },
    adminLoginAttemptsPerMinute: num(env, 'ADMIN_LOGIN_ATTEMPTS_PER_MINUTE', 10, { min: 1, int: true }),
    auditRetentionDays: num(env, 'AUDIT_RETENTION_DAYS', 30, { min: 1, int: true }),
    reservationExpiryMs: num(env, 'RESERVATION_LEASE_MS', 15 * 60_000, { min: 1000, int: true }),
    realtime: {
      sessionsPerKey: num(env, 'REALTIME_SESSIONS_PER_KEY', 4, { min: 1, int: true }),
      sessionsPerIp: num(env, 'REALTIME_SESSIONS_PER_IP', 32, { min: 1, int: true }),
      idleTimeoutMs: num(env, 'REALTIME_IDLE_TIMEOUT_MS', 5 * 60_000, { min: 100, int: true }),
      maxSessionMs: num(env, 'REALTIME_MAX_SESSION_MS', 60 * 60_000, { min: 1000, int: true }),
      maxFrameBytes: num(env, 'REALTIME_MAX_FRAME_BYTES', 2 * 1024 * 1024, { min: 1024, int: true }),
      maxBufferedBytes: num(env, 'REALTIME_MAX_BUFFERED_BYTES', 4 * 1024 * 1024, { min: 1024, int: true }),
      slowReaderMs: num(env, 'REALTIME_SLOW_READER_MS', 10_000, { min: 100, int: true }),
      audioTokensPerSecond: num(env, 'REALTIME_AUDIO_TOKENS_PER_SECOND', 20, { min: 1, int: true }),
      audioAllowanceMs: num(env, 'REALTIME_AUDIO_ALLOWANCE_MS', 60_000, { min: 0, int: true }),
    },
    cashu: {
      mints,
      seed: optStr(env, 'CASHU_SEED'),
      recoveryMs: num(env, 'WALLET_RECOVERY_MS', 60_000, { min: 100, int: true }),
      // A port the kernel picks (PORT=0) names nothing stable: such a process is an instance of its own.
      instanceName:
        optStr(env, 'INSTANCE_NAME') ??
        (num(env, 'PORT', 8000, { min: 0, int: true }) === 0
          ? undefined
          : `${hostname()}:${num(env, 'PORT', 8000, { min: 0, int: true })}`),
    },
    foreignMints: {
      mode: foreignMode,
      maxFeePercent: num(env, 'FOREIGN_MINT_MAX_FEE_PERCENT', 5, { min: 0 }),
      maxSats: num(env, 'FOREIGN_MINT_MAX_SATS', 100_000, { min: 1, int: true }),
    },
    lightning: {
      minSats: num(env, 'LIGHTNING_MIN_SATS', 1, { min: 1, int: true }),
      maxSats: num(env, 'LIGHTNING_MAX_SATS', 1_000_000, { min: 1, int: true }),
      pollMs: num(env, 'LIGHTNING_POLL_MS', 2000, { min: 50, int: true }),
      createPerMinute: num(env, 'LIGHTNING_CREATE_PER_MINUTE', 30, { min: 1, int: true }),
    },
    doors: {
      offered: doorsOffered as Array<'cashu' | 'l402' | 'mpp'>,
      minSats: num(env, 'L402_MIN_SATS', 10, { min: 1, int: true }),
      l402ExpiryS: num(env, 'L402_EXPIRY_S', 2_592_000, { min: 60, int: true }),
      closeTakeoverMs: num(env, 'MPP_CLOSE_TAKEOVER_MS', 30_000, { min: 1000, int: true }),
    },
    webhooks: {
      maxAttempts: num(env, 'WEBHOOK_MAX_ATTEMPTS', 16, { min: 1, int: true }),
      timeoutMs: num(env, 'WEBHOOK_TIMEOUT_MS', 10_000, { min: 100, int: true }),
      allowPrivateUrls: bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
      retryBaseMs: num(env, 'WEBHOOK_RETRY_BASE_MS', 10_000, { min: 10, int: true }),
      pollMs: num(env, 'WEBHOOK_POLL_MS', 1000, { min: 10, int: true }),
      alertSweepMs: Math.min(60_000, num(env, 'ALERT_SWEEP_MS', 30_000, { min: 10, int: true })),
    },
    refunds: {
      allowPrivateAddresses: bool(env, 'LIGHTNING_ADDRESS_ALLOW_PRIVATE', false),
      timeoutMs: num(env, 'LIGHTNING_ADDRESS_TIMEOUT_MS', 10_000, { min: 100, int: true }),
      sweep: bool(env, 'EXPIRED_KEY_SWEEP', true),
      sweepMs: num(env, 'EXPIRED_KEY_SWEEP_MS', 60_000, { min: 10, int: true }),
    },
    batches: {
      maxLines: num(env, 'BATCH_MAX_LINES', 50_000, { min: 1, int: true }),
      priceFactor: decimalFactor(env, 'BATCH_PRICE_FACTOR', '0.5'),
      pollMs: num(env, 'BATCH_POLL_MS', 30_000, { min: 10, int: true }),
      reconcilePolls: num(env, 'BATCH_RECONCILE_POLLS', 10, { min: 1, int: true }),
      otherPurposes: bool(env, 'FILES_OTHER_PURPOSES', false),
      filesMaxBytes: num(env, 'FILES_MAX_BYTES', 200 * 1024 * 1024, { min: 1, int: true }),
    },
    network: {
      nsec: optStr(env, 'NOSTR_NSEC'),
      relays: urlList(env, 'NOSTR_RELAYS', ['ws:', 'wss:']),
      publicUrls: urlList(env, 'NODE_PUBLIC_URLS', ['http:', 'https:']),
      nodeId: nodeId(env),
      refreshMs: Math.round(num(env, 'NOSTR_REFRESH_HOURS', 24, { min: 0.01 }) * 3_600_000),
      checkMs: num(env, 'NOSTR_CHECK_MS', 5000, { min: 100, int: true }),
    },
  };
}

/** A comma-separated list of absolute URLs with one of `protocols` (trailing slashes dropped). */
function urlList(env: Env, name: string, protocols: string[]): string[] {
  return list(env, name, []).map((u) => {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw new ConfigError(`${name} must be a comma-separated list of absolute URLs`);
    }
    if (!protocols.includes(parsed.protocol))
      throw new ConfigError(`${name} entries must be ${protocols.map((p) => `${p}//`).join(' or ')} URLs`);
    return u.replace(/\/+$/, '');
  });
}

function nodeId(env: Env): string | undefined {
  const v = optStr(env, 'NOSTR_NODE_ID');
  if (v !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(v))
    throw new ConfigError('NOSTR_NODE_ID must be 1-64 letters, digits, ".", "_" or "-"');
  return v;
}
