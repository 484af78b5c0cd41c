import type { ProviderReply } from '../batches/provider-call.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { RouteReply } from '../http/router.js';
import type { Credential, KeyInfo } from '../ledger/types.js';
import type { ObjectKind, ObjectOwners, OwnedObject } from '../objects/types.js';
import { ownedBy } from '../objects/types.js';
import type { Services } from '../plugin.js';
import { callerOf, loadKey, moneyServices } from './account.js';

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
}

export async function objectCaller(ctx: RequestContext, services: Services): Promise<ObjectCaller> {
  const money = moneyServices(services);
  const objects = services.objects;
  if (objects === undefined) {
    throw new GatewayError('service_unavailable', { message: 'This node has no store for provider objects' });
  }
  const caller = await callerOf(ctx, money);
  const info = await loadKey(ctx, services, money, caller.credential);
  return { credential: caller.credential, info, objects };
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

/** Keeps only the caller's objects in a provider list (`{object: 'list', data: [{id…}]}`). */
export async function ownList(
  c: ObjectCaller,
  r: ProviderReply,
  kind: ObjectKind,
  what: string,
): Promise<RouteReply> {
  const reply = passOn(r, what);
  if (r.status !== 200) return reply;
  let doc: { data?: unknown; first_id?: unknown; last_id?: unknown };
  try {
    doc = JSON.parse(r.body.toString('utf8')) as typeof doc;
  } catch (err) {
    throw new GatewayError('upstream_error', {
      message: `The provider sent invalid JSON for ${what}`,
      cause: err,
    });
  }
  const mine = new Set(await c.objects.list(c.info.key.keyId, kind, 10_000));
  const data = (Array.isArray(doc.data) ? doc.data : []).filter((o: { id?: unknown }) =>
    mine.has(String(o?.id)),
  );
  const ids = data.map((o: { id?: unknown }) => String(o.id));
  return { status: 200, json: { ...doc, data, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null } };
}
