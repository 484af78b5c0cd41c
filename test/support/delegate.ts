/**
 * A fake that stands in for `real`: each method named in `steps` answers as the step says (read on every call,
 * so a test may set or delete a step later), every other member is the real object's (methods bound to it).
 * Passed where the code takes its collaborator (a constructor or an option), so a test observes or breaks one
 * step without patching a method on the real object.
 */
export function withSteps<T extends object>(real: T, steps: Partial<T>): T {
  return new Proxy(real, {
    get(target, name) {
      const step = Object.hasOwn(steps, name) ? (steps as Record<PropertyKey, unknown>)[name] : undefined;
      if (step !== undefined) return step;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
