import { GatewayError } from '../../core/errors.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import type { LedgerFactory } from '../../core/services.js';

/**
 * A test double made from a real collaborator: `overriding(real, { method })` answers `method` with the given
 * function and forwards everything else to `real` (methods bound to it). The double is injected where the
 * collaborator is built (a factory option), never assigned over a method of a production object.
 */
export function overriding<T extends object>(real: T, methods: Partial<T>): T {
  const own = methods as Record<PropertyKey, unknown>;
  return new Proxy(real, {
    get(target, prop) {
      if (Object.hasOwn(own, prop)) return own[prop];
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * A ledger factory (MoneyServiceOptions.createLedger) building the real ledger, then a double of it whose
 * `steps(real)` answer instead of the real ones.
 */
export function ledgerOverriding(steps: (real: Ledger) => Partial<Ledger>): LedgerFactory {
  return async (conn, opts) => {
    const real = await createLedger(conn, opts);
    return overriding(real, steps(real));
  };
}

/** `step`, refused with store_unavailable (a store away at that step) while `refuse()` answers true. */
export function refusedWhile<A extends unknown[], R>(
  refuse: () => boolean,
  step: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    if (refuse()) throw new GatewayError('store_unavailable');
    return step(...args);
  };
}
