/**
 * The one polling helper of the tests: resolves once `check` answers true, polling every `everyMs`, with the
 * ms it waited; throws naming `what` when that did not happen within `ms`. A test waits on a condition with it
 * (or `expect.poll`), never on a fixed sleep that flakes on a loaded machine.
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 15_000,
  everyMs = 20,
): Promise<number> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what} (${ms} ms)`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return Date.now() - t0;
}

/** `until` on a value: reads `read` until `done` holds for its answer, and resolves with that answer. */
export async function untilValue<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  ms = 15_000,
  everyMs = 20,
): Promise<T> {
  let last: T | undefined;
  await until(
    what,
    async () => {
      last = await read();
      return done(last);
    },
    ms,
    everyMs,
  );
  return last as T;
}
