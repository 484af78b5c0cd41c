import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { RouteModule } from '../http/router.js';
import type { Services } from '../plugin.js';
import { adminCsp, type DashboardData, dashboardPage, loginPage } from './admin-page.js';
import {
  applyPatch,
  loadSettings,
  preparePatch,
  saveSettings,
  settingsView,
  validatePatch,
} from './admin-settings.js';
import { packageVersion } from './public.js';
import { route } from './wallet.js';

/**
 * Admin endpoints (spec §4.4, §5.6): GET /admin/ (HTML dashboard, or a login form without a valid cookie),
 * GET and PATCH /admin/api/settings (see admin-settings.ts for what is shown, redacted and changeable).
 *
 * Authentication: the `admin_password` cookie, compared with ADMIN_PASSWORD in constant time (SHA-256 of
 * both, then `timingSafeEqual`, so neither the value nor its length leaks through timing). Without
 * ADMIN_PASSWORD the admin surface is off: /admin/ answers 404, the API 403 `forbidden`.
 *
 * At registration the persisted runtime settings are loaded from the store and applied over the
 * environment (synchronously on SQLite; on Redis within the first round trip after start).
 */

/** The `admin_password` cookie's value, URL-decoded; undefined when absent. */
export function adminCookie(headers: Readonly<Record<string, string>>): string | undefined {
  const raw = headers.cookie;
  if (raw === undefined) return undefined;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() !== 'admin_password') continue;
    const v = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(v);
    } catch {
      return v;
    }
  }
  return undefined;
}

/** Constant-time password check (digests first: equal lengths whatever the input). */
export function passwordMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

const NO_STORE = { 'cache-control': 'no-store' };

function requireAdmin(ctx: RequestContext, services: Services): void {
  const expected = services.config.adminPassword;
  if (expected === undefined) {
    throw new GatewayError('forbidden', { message: 'The admin API is disabled (no ADMIN_PASSWORD set)' });
  }
  if (!passwordMatches(adminCookie(ctx.headers), expected)) throw new GatewayError('admin_auth_required');
}

async function dashboardData(services: Services): Promise<DashboardData> {
  const c = services.config;
  const data: DashboardData = {
    node: {
      name: c.node.name,
      description: c.node.description,
      version: packageVersion(),
      npub: c.node.npub,
      mints: c.cashu.mints,
    },
    audit: { error: 'No balance store configured' },
    wallet: { error: 'No eCash wallet configured (CASHU_MINTS)' },
    settings: settingsView(services, services.store?.kind),
  };
  if (services.ledger) {
    try {
      const report = await services.ledger.audit();
      data.audit = {
        ok: report.ok,
        accounts: report.accounts,
        breaches: report.breaches.length,
        totals: { ...report.totals },
      };
    } catch {
      data.audit = { error: 'The balance store is unavailable' };
    }
  }
  if (services.wallet) {
    try {
      data.wallet = (await services.wallet.balances()).map((b) => ({
        mint: b.mint,
        unit: b.unit,
        amount: b.amount,
        reserved: b.reserved,
        proofs: b.proofs,
      }));
    } catch {
      data.wallet = { error: 'The wallet store is unavailable' };
    }
  }
  return data;
}

export const adminRoutes: RouteModule = (router, services: Services) => {
  const store = services.store;
  if (store !== undefined) {
    // Persisted settings win over the environment; a failure here keeps the environment's values.
    loadSettings(store)
      .then((saved) => {
        if (Object.keys(saved).length > 0) applyPatch(services, validatePatch(services, saved));
      })
      .catch((err: unknown) => services.log.warn({ err }, 'could not load the persisted admin settings'));
  }

  route(router, 'GET', '/admin/', async (ctx) => {
    const expected = services.config.adminPassword;
    if (expected === undefined)
      throw new GatewayError('not_found', { message: 'The admin page is disabled' });
    const nonce = randomBytes(16).toString('base64');
    const headers = {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': adminCsp(nonce),
      ...NO_STORE,
    };
    const cookie = adminCookie(ctx.headers);
    if (!passwordMatches(cookie, expected)) {
      return { status: 200, headers, body: loginPage(nonce, cookie !== undefined) };
    }
    return { status: 200, headers, body: dashboardPage(nonce, await dashboardData(services)) };
  });

  route(router, 'GET', '/admin/api/settings', (ctx) => {
    requireAdmin(ctx, services);
    return { headers: NO_STORE, json: settingsView(services, store?.kind) };
  });

  route(router, 'PATCH', '/admin/api/settings', async (ctx) => {
    requireAdmin(ctx, services);
    const body = (ctx.body ?? {}) as Record<string, unknown>;
    const patch = validatePatch(services, body);
    if (Object.keys(patch).length > 0) {
      const apply = preparePatch(services, patch);
      // Applied only once persisted: a store failure (503) leaves the running settings unchanged.
      if (store !== undefined) {
        await saveSettings(store, patch).catch((err: unknown) => {
          throw new GatewayError('store_unavailable', { cause: err });
        });
      }
      apply();
      services.log.info({ changed: Object.keys(patch) }, 'admin settings changed');
    }
    return { headers: NO_STORE, json: settingsView(services, store?.kind) };
  });
};
