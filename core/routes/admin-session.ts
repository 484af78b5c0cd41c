import { createHash, randomBytes } from 'node:crypto';
import { cachedIpList } from '../auth/ip-match.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { StoreConnection } from '../store/connection.js';
import { migrate } from '../store/sqlite-migrations.js';

/**
 * Console sessions (POST /admin/login, POST /admin/logout) and the browser checks of the admin surface.
 *
 * - A session id is 32 random bytes (base64url), sent once in the `admin_session` cookie (`HttpOnly;
 *   SameSite=Strict; Path=/admin`, plus `Secure` when the request came over https — see `arrivedOverHttps`).
 *   The store keeps only its SHA-256, with its expiry (ADMIN_SESSION_HOURS), in the money store, so a session
 *   made on one process works on every process sharing it. Redis: `<prefix>:admin:session:<hash>` with a
 *   TTL; SQLite: the table `admin_sessions`; no store: this process's memory.
 * - Same origin: a state-changing admin request (any method but GET/HEAD) that a browser marks as coming
 *   from another site (`Origin` naming another host, or `Sec-Fetch-Site` other than `same-origin`/`none`) is
 *   refused with 403 `forbidden` — the session cookie is SameSite=Strict already; this also covers the
 *   `admin_password` cookie API clients may still send. Clients that send neither header (scripts) pass.
 */

export const SESSION_COOKIE = 'admin_session';

const hashOf = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex');

export class AdminSessions {
  private readonly memory = new Map<string, number>();

  constructor(private readonly store: StoreConnection | undefined) {
    if (store?.kind === 'sqlite') migrate(store.db);
  }

  /** A new session lasting `ttlMs`; returns its id (the cookie value; never stored as is). */
  async create(ttlMs: number, now = Date.now()): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const h = hashOf(id);
    const s = this.store;
    if (s?.kind === 'redis') {
      await s.redis.set(`${s.prefix}:admin:session:${h}`, String(now + ttlMs), 'PX', Math.ceil(ttlMs));
    } else if (s?.kind === 'sqlite') {
      s.db.prepare('DELETE FROM admin_sessions WHERE expires_at <= ?').run(now);
      s.db.prepare('INSERT INTO admin_sessions (id_hash, expires_at) VALUES (?, ?)').run(h, now + ttlMs);
    } else {
      this.memory.set(h, now + ttlMs);
    }
    return id;
  }

  /** Whether `id` names a session that has not expired or ended. */
  async valid(id: string | undefined, now = Date.now()): Promise<boolean> {
    if (id === undefined || !/^[A-Za-z0-9_-]{43}$/.test(id)) return false;
    const h = hashOf(id);
    const s = this.store;
    let expires: number | undefined;
    if (s?.kind === 'redis') {
      const v = await s.redis.get(`${s.prefix}:admin:session:${h}`);
      expires = v === null ? undefined : Number(v);
    } else if (s?.kind === 'sqlite') {
      const row = s.db.prepare('SELECT expires_at FROM admin_sessions WHERE id_hash = ?').get(h) as
        | { expires_at: number }
        | undefined;
      expires = row?.expires_at;
    } else {
      expires = this.memory.get(h);
    }
    return expires !== undefined && expires > now;
  }

  /** Ends the session (idempotent). */
  async end(id: string | undefined): Promise<void> {
    if (id === undefined) return;
    const h = hashOf(id);
    const s = this.store;
    if (s?.kind === 'redis') await s.redis.del(`${s.prefix}:admin:session:${h}`);
    else if (s?.kind === 'sqlite') s.db.prepare('DELETE FROM admin_sessions WHERE id_hash = ?').run(h);
    else this.memory.delete(h);
  }
}

/** True when the request reached the proxy in front of us over https (`X-Forwarded-Proto` of a trusted proxy). */
export function arrivedOverHttps(ctx: RequestContext, trustedProxies: readonly string[]): boolean {
  const trusted = cachedIpList(trustedProxies);
  if (trusted === null || !trusted.has(ctx.clientIp)) return false;
  const proto = ctx.headers['x-forwarded-proto'];
  return proto !== undefined && proto.split(',')[0]!.trim().toLowerCase() === 'https';
}

/** The session cookie, set (`maxAgeS` > 0) or cleared (0). */
export function sessionCookie(id: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=${maxAgeS}${secure ? '; Secure' : ''}`;
}

/** 403 for a state-changing admin request a browser sent from another site (see the file header). */
export function assertSameOrigin(ctx: RequestContext, trustedProxies: readonly string[]): void {
  if (ctx.method === 'GET' || ctx.method === 'HEAD') return;
  const site = ctx.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw crossOrigin();
  const origin = ctx.headers.origin;
  if (origin === undefined) return;
  // Behind a trusted proxy the host the browser used may be forwarded.
  const trusted = cachedIpList(trustedProxies);
  const forwarded = trusted?.has(ctx.clientIp) ? ctx.headers['x-forwarded-host'] : undefined;
  const host = (forwarded ?? ctx.headers.host ?? '').split(',')[0]!.trim().toLowerCase();
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    throw crossOrigin();
  }
  if (originHost === '' || originHost !== host) throw crossOrigin();
}

function crossOrigin(): GatewayError {
  return new GatewayError('forbidden', {
    message: 'Cross-origin admin request refused: use the console from this host',
  });
}
