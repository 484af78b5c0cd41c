import { parseLnUrlPayResponse } from '@getalby/lightning-tools/lnurl';
import { type Agent, request } from 'undici';
import { GatewayError } from '../errors.js';
import { checkedAddresses, guardedAgent, isPublicAddress, UnsafeUrlError } from '../events/ssrf.js';
import { bolt11AmountMsat } from '../wallet/bolt11.js';

/**
 * Lightning addresses (LUD-16 `name@host`) as refund destinations: resolving one to its LNURL-pay parameters
 * (LUD-06: `https://host/.well-known/lnurlp/name`) and asking its callback for an invoice of an amount.
 *
 * Every request goes through the webhooks' SSRF guard (core/events/ssrf.ts): the host must resolve only to
 * public addresses, the connection goes to the very address checked, no redirect is followed, answers are
 * bounded in size and time. `allowPrivate` (LIGHTNING_ADDRESS_ALLOW_PRIVATE, like WEBHOOK_ALLOW_PRIVATE_URLS for
 * webhooks) lets addresses resolve to private or loopback hosts, and only those are then reached over plain http
 * (a test's LNURL server on loopback, a node on a private network); a public host is always https.
 *
 * `@getalby/lightning-tools` checks the LNURL-pay answer (`parseLnUrlPayResponse`: tag, callback, sendable
 * range, metadata). Its `LightningAddress` class is not used: it fetches with the global `fetch` (by default
 * through a third-party proxy), which no guard can be put in front of, and its address pattern refuses a port.
 */

/** LNURL-pay parameters of a Lightning address (msats). */
export interface LnurlPay {
  address: string;
  callback: string;
  minSendableMsat: number;
  maxSendableMsat: number;
}

const MAX_ANSWER_BYTES = 64 * 1024;
/** LUD-16 names: lower-case letters, digits and `-_.+`; the host is a DNS name or an IP, with an optional port. */
const NAME = /^[a-z0-9\-_.+]{1,64}$/;

export interface LightningAddressOptions {
  allowPrivate: boolean;
  timeoutMs: number;
}

export class LightningAddresses {
  private readonly agent: Agent;

  constructor(private readonly opts: LightningAddressOptions) {
    this.agent = guardedAgent(opts.allowPrivate, opts.timeoutMs);
  }

  /** `name@host` lower-cased and split; 400 `refund_address_invalid` otherwise. */
  parse(address: string): { name: string; host: string; address: string } {
    const text = address.trim().toLowerCase();
    const at = text.lastIndexOf('@');
    const name = text.slice(0, at);
    const host = text.slice(at + 1);
    let url: URL | undefined;
    try {
      url = at > 0 ? new URL(`https://${host}`) : undefined;
    } catch {
      url = undefined;
    }
    if (!NAME.test(name) || url === undefined || url.host !== host || host.length > 253) {
      throw new GatewayError('refund_address_invalid', {
        details: { refund_address: address.slice(0, 80) },
      });
    }
    return { name, host, address: `${name}@${host}` };
  }

  /**
   * The address's LNURL-pay parameters. @throws GatewayError `refund_address_invalid`, `refund_address_refused`
   * (SSRF guard), `refund_address_unresolvable` (no answer, not 200, not JSON, an LNURL error),
   * `refund_address_not_lnurl_pay` (an answer that is not a valid payRequest).
   */
  async resolve(address: string): Promise<LnurlPay> {
    const a = this.parse(address);
    const url = await this.guardedUrl(
      `https://${a.host}/.well-known/lnurlp/${encodeURIComponent(a.name)}`,
      true,
    );
    const body = await this.getJson(url, 'refund_address_unresolvable');
    let parsed: Awaited<ReturnType<typeof parseLnUrlPayResponse>>;
    try {
      parsed = await parseLnUrlPayResponse(body as Parameters<typeof parseLnUrlPayResponse>[0]);
    } catch (err) {
      throw new GatewayError('refund_address_not_lnurl_pay', {
        message: `The refund address does not answer as an LNURL-pay endpoint: ${(err as Error).message}`,
      });
    }
    // The callback is reached later, for the invoice: it must pass the same guard now.
    await this.guardedUrl(parsed.callback, false);
    return {
      address: a.address,
      callback: parsed.callback,
      minSendableMsat: parsed.min,
      maxSendableMsat: parsed.max,
    };
  }

  /**
   * An invoice of exactly `amountMsat` from the address's callback (LUD-06). @throws GatewayError
   * `refund_address_refused`, `refund_invoice_failed` (no answer, an LNURL error, no invoice or another amount).
   */
  async invoice(pay: LnurlPay, amountMsat: number): Promise<string> {
    const url = await this.guardedUrl(pay.callback, false);
    url.searchParams.set('amount', String(amountMsat));
    const body = (await this.getJson(url, 'refund_invoice_failed')) as { pr?: unknown };
    const pr = typeof body.pr === 'string' ? body.pr.trim() : '';
    const amount = pr === '' ? undefined : bolt11AmountMsat(pr);
    if (amount === undefined || amount === null || amount !== BigInt(amountMsat)) {
      throw new GatewayError('refund_invoice_failed', {
        message:
          pr === ''
            ? 'The LNURL-pay callback answered without an invoice'
            : `The LNURL-pay callback's invoice is not for ${amountMsat} msats`,
      });
    }
    return pr;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /**
   * The URL, once its host passed the guard: https, or http only for a private host the operator allows (`ownUrl`:
   * the URL made from the address itself, switched to http for such a host). @throws GatewayError `code` (refused by the guard) or `refund_address_unresolvable` (the host does not resolve).
   */
  private async guardedUrl(raw: string, ownUrl: boolean): Promise<URL> {
    const code = 'refund_address_refused';
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new GatewayError('refund_address_not_lnurl_pay', {
        message: 'The LNURL-pay callback is not a URL',
      });
    }
    if (url.username !== '' || url.password !== '') {
      throw new GatewayError(code, { message: 'The LNURL-pay URL carries credentials' });
    }
    let addrs: Awaited<ReturnType<typeof checkedAddresses>>;
    try {
      addrs = await checkedAddresses(url.hostname, this.opts.allowPrivate);
    } catch (err) {
      if (err instanceof UnsafeUrlError && err.message.startsWith('host does not resolve')) {
        throw new GatewayError('refund_address_unresolvable', {
          message: `The refund address's ${err.message}`,
        });
      }
      throw new GatewayError(code, { message: `Refused: ${(err as Error).message}` });
    }
    const local = addrs.every((a) => !isPublicAddress(a.address));
    if (url.protocol === 'http:' && !(this.opts.allowPrivate && local)) {
      throw new GatewayError(code, { message: 'Refused: LNURL-pay URLs must be https' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new GatewayError(code, { message: 'Refused: LNURL-pay URLs must be https' });
    }
    // The address's own URL to a private host the operator allows: plain http (no certificate on loopback).
    if (ownUrl && this.opts.allowPrivate && local) url.protocol = 'http:';
    return url;
  }

  private async getJson(
    url: URL,
    code: 'refund_address_unresolvable' | 'refund_invoice_failed',
  ): Promise<unknown> {
    const fail = (why: string) => new GatewayError(code, { message: `${ERROR_PREFIX[code]}: ${why}` });
    let text: string;
    try {
      const r = await request(url, {
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'prepaid-model-gateway-refunds' },
        dispatcher: this.agent,
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      if (r.statusCode !== 200) {
        await r.body.dump().catch(() => undefined);
        throw fail(`HTTP ${r.statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of r.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_ANSWER_BYTES) {
          r.body.destroy();
          throw fail('the answer is too large');
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      const cause = (err as { cause?: Error }).cause;
      if (cause instanceof UnsafeUrlError) {
        throw new GatewayError('refund_address_refused', { message: `Refused: ${cause.message}` });
      }
      throw fail((cause?.message ?? (err as Error).message ?? 'no answer').slice(0, 200));
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw fail('the answer is not JSON');
    }
    if (body === null || typeof body !== 'object') throw fail('the answer is not a JSON object');
    const status = (body as { status?: unknown }).status;
    if (typeof status === 'string' && status.toUpperCase() === 'ERROR') {
      const reason = (body as { reason?: unknown }).reason;
      throw fail(`LNURL error: ${typeof reason === 'string' ? reason.slice(0, 200) : 'no reason given'}`);
    }
    return body;
  }
}

const ERROR_PREFIX = {
  refund_address_unresolvable: "The refund address's LNURL-pay endpoint failed",
  refund_invoice_failed: "The refund address's LNURL-pay callback failed",
} as const;
