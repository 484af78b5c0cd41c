import { newWebhookSecret } from '../../../core/events/signing.js';
import type { PaidGateway } from '../../support/paid-gateway.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are checked field by field
export type Json = any;

/** The webhook endpoints of a paid gateway as its clients call them, with a bearer key. */
export function webhookClient(h: PaidGateway) {
  /** JSON in and out: the status and the parsed answer. */
  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${h.gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, json: (await r.json()) as Json };
  };
  return {
    api,
    /** `POST /v1/webhooks`: `events` delivered to `url`, signed with `secret` (a fresh one by default). */
    register: (key: string, url: string, events: string[], secret = newWebhookSecret()) =>
      api(key, 'POST', '/v1/webhooks', { url, events, secret }),
    /** One small paid chat call (at most 8 completion tokens). */
    paidCall: (key: string) =>
      h.openai(key).chat.completions.create({
        model: 'mock-gpt',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'x' }],
      }),
  };
}
