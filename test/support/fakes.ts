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
