import { createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook signatures, both conventions (docs/webhooks.md, "Signatures"):
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` (Unix seconds),
 *   `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the base64 part of a
 *   `whsec_…` secret (any other secret string: its UTF-8 bytes).
 * - The gateway's `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the secret
 *   string exactly as registered.
 * The `webhook-id` is the delivery's message id: a retry repeats it.
 */

/** A new `whsec_…` secret (24 random bytes, base64). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The HMAC key Standard Webhooks derives from a secret. */
function standardKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

export function signatureHeaders(
  secret: string,
  msgId: string,
  body: string,
  timestampUnix: number,
): Record<string, string> {
  const std = createHmac('sha256', standardKey(secret))
    .update(`${msgId}.${timestampUnix}.${body}`)
    .digest('base64');
  const spec = createHmac('sha256', secret).update(body).digest('hex');
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampUnix),
    'webhook-signature': `v1,${std}`,
    'x-webhook-signature': `sha256=${spec}`,
  };
}
