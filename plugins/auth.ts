import { ConfigError } from '../core/config.js';
import { GatewayError } from '../core/errors.js';
import type { Plugin, PluginFactory } from '../core/plugin.js';

/**
 * Thin default auth stage, in place until the ledger-backed one exists. It refuses EVERY call, so the
 * shipped default pipeline can never let a model call through unpaid:
 * - no credentials (no Authorization, no X-Cashu, no `api_key` query on GET) → 401 `missing_credentials`;
 * - `Bearer sk-…` → 401 `invalid_api_key` (there is no key store yet, so no key is known);
 * - anything else (an eCash token, another scheme) → 401 `invalid_api_key`.
 */
export const auth: PluginFactory = (options): Plugin => {
  if (options !== undefined && Object.keys(options).length > 0) {
    throw new ConfigError(`auth: unknown options ${Object.keys(options).join(', ')}`);
  }
  return {
    name: 'auth',
    onRequest(ctx) {
      const authorization = ctx.headers.authorization;
      const xCashu = ctx.headers['x-cashu'];
      const queryKey =
        ctx.method === 'GET' && ctx.rawQuery.includes('api_key') ? ctx.query.get('api_key') : null;
      if (!authorization && !xCashu && !queryKey) throw new GatewayError('missing_credentials');
      const bearer = authorization?.match(/^Bearer\s+(\S+)/i)?.[1] ?? queryKey ?? '';
      if (bearer.startsWith('sk-')) throw new GatewayError('invalid_api_key');
      throw new GatewayError('invalid_api_key', {
        message: 'The credential is not accepted: eCash payment is not enabled on this node yet',
      });
    },
  };
};
