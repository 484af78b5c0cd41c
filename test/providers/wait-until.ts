/**
 * Polls `check` until it returns true (a bounded wait for a state, instead of a fixed sleep that flakes on a
 * loaded machine). Throws naming `what` when it did not happen within `timeoutMs`.
 */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
