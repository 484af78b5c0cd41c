/**
 * The chaos run's clients: paid chat calls in all three payment modes (an `sk-` key, an eCash token as the
 * bearer, a token in `X-Cashu`), streamed and not, against a random live gateway process. Like a real client,
 * a call that got no answer or a 5xx is retried with the SAME token (up to 3 tries), so a token the gateway
 * redeemed just before dying gets its credit on the retry. Every change and refund token that comes back is
 * kept, to be redeemed at the mint at the end.
 */

export type PayMode = 'key' | 'bearer' | 'x-cashu';

export interface TrafficCounts {
  calls: number;
  served: number;
  refused: number;
  failed: number;
  retried: number;
  refunds: number;
}

export interface Returned {
  /** Change (X-Cashu) and refund tokens handed back to clients. */
  tokens: string[];
}

export interface CallPlan {
  mode: PayMode;
  stream: boolean;
  /** The API key (key mode) or the token (bearer / X-Cashu modes). */
  credential: string;
}

const CHAT = JSON.stringify({
  model: 'mock-gpt',
  messages: [{ role: 'user', content: 'chaos' }],
  max_tokens: 8,
});

/** One paid call; returns 'served' | 'refused' | 'failed' (no answer, a cut body, or a 5xx). */
export async function paidCall(
  baseUrl: string,
  plan: CallPlan,
  returned: Returned,
  timeoutMs: number,
): Promise<'served' | 'refused' | 'failed'> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (plan.mode === 'x-cashu') headers['x-cashu'] = plan.credential;
  else headers.authorization = `Bearer ${plan.credential}`;
  const body = plan.stream ? CHAT.replace('"max_tokens":8', '"max_tokens":8,"stream":true') : CHAT;
  try {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const change = res.headers.get('x-cashu');
    if (change?.startsWith('cashu')) returned.tokens.push(change);
    const m = /^: x-cashu (cashu\S+)/m.exec(text);
    if (m) returned.tokens.push(m[1]!);
    if (res.status >= 500) return 'failed';
    if (res.status >= 400) return 'refused';
    if (plan.stream && !text.includes('[DONE]')) return 'failed';
    return 'served';
  } catch {
    return 'failed';
  }
}

/** Refund of a bearer token's balance (POST /v1/wallet/refund); the token returned is kept. */
export async function refund(baseUrl: string, bearer: string, returned: Returned, timeoutMs: number) {
  try {
    const res = await fetch(`${baseUrl}/v1/wallet/refund`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const j = (await res.json()) as { cashu_token?: string; token?: string };
    const t = j.cashu_token ?? j.token;
    if (res.ok && t) returned.tokens.push(t);
    return res.status;
  } catch {
    return 0;
  }
}
