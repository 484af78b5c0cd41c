import { closeKey } from '../account/close-key.js';
import { HOLD_EXPIRY_MS } from '../account/pay-out.js';
import { AUDIT_SUBJECT } from '../audit/audit-log.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { type Router, route } from '../http/router.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import type { KeyInfo, KeyRef, KeyTarget, Ledger } from '../ledger/types.js';
import type { Services } from '../service-types.js';
import { keyView, payoutView } from './admin-views.js';

/**
 * The operator's key lifecycle (docs/endpoints.md, "Key lifecycle"):
 * - PATCH /admin/api/keys/{key_id} `{"disabled": bool}`: the store refuses a disabled key (and every child of
 *   a disabled parent) with 401 `key_disabled` from that step on, and the credit leases of its account are
 *   closed on every process before the answer (core/ledger/leasing.ts, updateKey); `applied_everywhere: false`
 *   (with `applied_by`) when a process did not answer that recall within its wait. The balance stays.
 * - DELETE /admin/api/keys/{key_id}[?refund=true]: core/account/close-key.ts (disable, pay out, delete).
 * Both are audited as admin records naming the key (its owner's audit reader shows them too).
 */

const NO_STORE = { 'cache-control': 'no-store' };

/** The key by id and how the ledger's key changes address it (a child through its parent). */
async function findKey(
  ledger: Ledger,
  keyId: string,
): Promise<{ ref: KeyRef; info: KeyInfo; target: KeyTarget }> {
  const ref = await ledger.findKeyById(keyId).catch(storeFailure);
  const info = ref === null ? null : await ledger.getKeyInfo(ref).catch(storeFailure);
  if (ref === null || info === null) {
    throw new GatewayError('not_found', { message: 'No key has that key id (or it was deleted)' });
  }
  if (!info.key.isChild) return { ref, info, target: { credential: ref } };
  const parent = await ledger.findKeyById(info.key.parentKeyId ?? '').catch(storeFailure);
  if (parent === null) throw new GatewayError('not_found', { message: "The key's parent key is gone" });
  return { ref, info, target: { credential: parent, childKeyId: info.key.keyId } };
}

function storeFailure(err: unknown): never {
  if (err instanceof GatewayError) throw err;
  throw new GatewayError('store_unavailable', { cause: err });
}

/** The request's audit record: an admin record naming the key it acted on. */
function auditKeyAction(ctx: RequestContext, ref: KeyRef): void {
  ctx.setLocal(AUDIT_SUBJECT, { admin: true, credential: ref });
}

export function adminKeyRoutes(
  router: Router,
  services: Services,
  requireAdmin: (ctx: RequestContext, services: Services) => Promise<void>,
): void {
  const needLedger = (): Ledger => {
    if (!services.ledger)
      throw new GatewayError('service_unavailable', { message: 'No balance store configured' });
    return services.ledger;
  };

  route(router, 'PATCH', '/admin/api/keys/{key_id}', async (ctx, body) => {
    await requireAdmin(ctx, services);
    const ledger = needLedger();
    const { ref, target } = await findKey(ledger, ctx.params.key_id ?? '');
    auditKeyAction(ctx, ref);
    const r = await ledger.updateKey(target, { disabled: body.disabled }).catch(storeFailure);
    if (!r.ok) throw ledgerRefusalToError(r);
    const info = await ledger.getKeyInfo(ref).catch(storeFailure);
    if (info === null) throw new GatewayError('not_found', { message: 'The key was deleted meanwhile' });
    services.log.info(
      { keyId: r.key.keyId, disabled: body.disabled, pendingLeases: r.pendingLeases?.count ?? 0 },
      'admin: key disabled or enabled',
    );
    return {
      headers: NO_STORE,
      json: {
        ...keyView(info.key, info.usage),
        // Credit leases of other processes that did not answer the recall in time apply it by their expiry.
        applied_everywhere: r.pendingLeases === undefined,
        applied_by: r.pendingLeases?.appliedByMs ?? null,
      },
    };
  });

  route(router, 'DELETE', '/admin/api/keys/{key_id}', async (ctx) => {
    await requireAdmin(ctx, services);
    const refundParam = ctx.query.get('refund');
    if (refundParam !== null && refundParam !== 'true' && refundParam !== 'false') {
      throw new GatewayError('validation_failed', { message: 'refund: must be true or false' });
    }
    const ledger = needLedger();
    const { ref, target } = await findKey(ledger, ctx.params.key_id ?? '');
    auditKeyAction(ctx, ref);
    const r = await closeKey(
      { ledger, wallet: services.wallet },
      { target, self: ref, refund: refundParam === 'true', keepDisabled: true, expiresInMs: HOLD_EXPIRY_MS },
    );
    services.log.info(
      { keyId: r.key.keyId, deleted: r.deleted, refundedMsat: r.refund?.amountMsat ?? 0 },
      'admin: key deleted',
    );
    return {
      headers: NO_STORE,
      json: {
        key_id: r.key.keyId,
        deleted: r.deleted,
        refund: r.refund === null ? null : payoutView(r.refund),
        left_msats: r.leftMsat,
      },
    };
  });
}
