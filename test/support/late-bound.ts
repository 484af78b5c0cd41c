/**
 * Stands for what `get` answers once a hook has made it (a fixture started in `beforeAll`): every property read
 * goes to it then, methods bound to it; a read before that (while a describe block is being declared) throws
 * naming `what`. The stand-in is not the object itself: compare, `instanceof` or spread the object `get` answers.
 */
export function lateBound<T extends object>(get: () => T | undefined, what: string): T {
  return new Proxy({} as T, {
    get(_, prop) {
      const target = get();
      if (!target) throw new Error(`${what} is not started (read: ${String(prop)})`);
      const v: unknown = Reflect.get(target, prop);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
