import { type ProviderReply, providerCall, providerJson } from '../batches/provider-call.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { RouteReply } from '../http/router.js';
import type { Credential, KeyInfo } from '../ledger/types.js';
import type { ObjectKind, ObjectOwners, OwnedObject } from '../objects/types.js';
import { ownedBy } from '../objects/types.js';
import type { Services } from '../service-types.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';
import { type Caller, callerOf, loadKey, requireMoney } from './account.js';

/**
 * What the Files, Batches and Responses object routes share: the calling key (a bearer `sk-` key or an eCash
 * bearer identity; X-Cashu names no account and is refused), the ownership check (another key's id is 404, as
 * if it did not exist), and the provider's answer passed on (the relay's rule: 2xx and a 4xx with JSON as they
 * are, anything else 502 `upstream_error`).
 */

export interface ObjectCaller {
  credential: Credential;
  info: KeyInfo;
  objects: ObjectOwners;
  /** An eCash token names the account (bearer): its unit (a batch it pays is charged in whole units of it). */
  unit?: Caller['unit'];
}

export async function objectCaller(ctx: RequestContext, services: Services): Promise<ObjectCaller> {
  const money = requireMoney(services);
  const objects = services.objects;
  if (objects === undefined) {
    throw new GatewayError('service_unavailable', { message: 'This node has no store for provider objects' });
  }
  const caller = await callerOf(ctx, money);
  const info = await loadKey(ctx, services, money, caller.credential);
  return {
    credential: caller.credential,
    info,
    objects,
    ...(caller.unit !== undefined ? { unit: caller.unit } : {}),
  };
}

/** The object when the caller's key owns it; 404 otherwise (never saying whether it exists). */
export async function ownObject(
  c: ObjectCaller,
  id: string | undefined,
  kind: ObjectKind,
): Promise<OwnedObject> {
  const o = id === undefined ? null : await ownedBy(c.objects, id, kind, c.info.key.keyId);
  if (o === null) throw new GatewayError('not_found', { message: `No such ${kind}: ${id ?? ''}` });
  return o;
}

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json/i;

function contentType(r: ProviderReply): string | undefined {
  const t = r.headers['content-type'];
  return Array.isArray(t) ? t[0] : t;
}

/** The provider's answer as the client's reply (see the rule above). */
export function passOn(r: ProviderReply, what: string): RouteReply {
  const type = contentType(r);
  const json = type !== undefined && JSON_TYPE.test(type);
  if ((r.status >= 200 && r.status < 300) || (r.status >= 400 && r.status < 500 && json)) {
    return {
      status: r.status,
      headers: { 'content-type': type ?? 'application/octet-stream' },
      body: r.body,
    };
  }
  throw new GatewayError('upstream_error', {
    message: `The provider answered ${r.status} to ${what}`,
    details: { upstream_status: r.status },
  });
}

/** Page size of `GET /v1/files` and `GET /v1/batches`: default and largest `limit`. */
export const LIST_DEFAULT_LIMIT = 20;
export const LIST_MAX_LIMIT = 100;
/** Provider reads in flight per list answer. */
const LIST_FETCHES = 8;

/**
 * A page of the caller's own objects (`{object: 'list', data, first_id, last_id, has_more}`), answered from the
 * ownership store — the key's ids, newest first, `limit` (1 … 100, default 20) after `after` — never from the
 * provider's list, which holds every key's objects. Each object's current state is read from the provider (at most
 * 8 at a time); one the provider no longer has (404, e.g. an expired file) is left out of the page. `order`
 * other than `desc` and the provider's other filters (`purpose`) are refused with 400 rather than ignored.
 */
export async function ownList(
  c: ObjectCaller,
  upstream: UpstreamClient,
  rawQuery: string,
  kind: ObjectKind,
  onObject?: (o: Record<string, unknown>) => Promise<void>,
): Promise<RouteReply> {
  const query = new URLSearchParams(rawQuery);
  let limit = LIST_DEFAULT_LIMIT;
  const rawLimit = query.get('limit');
  if (rawLimit !== null) {
    limit = Number(rawLimit);
    if (!/^\d+$/.test(rawLimit) || limit < 1 || limit > LIST_MAX_LIMIT) {
      throw new GatewayError('invalid_request', {
        message: `limit must be an integer from 1 to ${LIST_MAX_LIMIT} (got ${rawLimit})`,
      });
    }
  }
  const order = query.get('order');
  if (order !== null && order !== 'desc') {
    throw new GatewayError('invalid_request', { message: 'order: only "desc" (newest first) is supported' });
  }
  for (const name of query.keys()) {
    if (name !== 'limit' && name !== 'after' && name !== 'order' && name !== 'api_key') {
      throw new GatewayError('invalid_request', { message: `Unsupported list parameter: ${name}` });
    }
  }
  const after = query.get('after') ?? undefined;
  const ids = await c.objects.list(c.info.key.keyId, kind, limit + 1, after === '' ? undefined : after);
  const page = ids.slice(0, limit);
  const base = kind === 'batch' ? '/v1/batches' : kind === 'file' ? '/v1/files' : '/v1/responses';
  const what = `GET ${base}/{id}`;
  const found: Array<Record<string, unknown> | null> = new Array(page.length).fill(null);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < page.length) {
      const i = next++;
      const r = await providerCall(upstream, {
        method: 'GET',
        path: `${base}/${encodeURIComponent(page[i]!)}`,
      });
      if (r.status === 404) continue;
      const o = providerJson(r, what);
      await onObject?.(o);
      found[i] = o;
    }
  };
  await Promise.all(Array.from({ length: Math.min(LIST_FETCHES, page.length) }, worker));
  const data = found.filter((o): o is Record<string, unknown> => o !== null);
  return {
    status: 200,
    json: {
      object: 'list',
      data,
      first_id: page[0] ?? null,
      last_id: page.at(-1) ?? null,
      has_more: ids.length > limit,
    },
  };
}
