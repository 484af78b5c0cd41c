/**
 * Which Node.js versions the gateway runs on (README, "Set-up"; `engines` in package.json says the same):
 * Node 22 (from 22.12) and 24 LTS are supported, and the test command runs the suite on Node 24 as well as on
 * the machine's Node. Node 20 reached its end of life on 2026-04-30 and `@cashu/cashu-ts` declares Node 22.4+:
 * it still starts (from 20.19, what the dependencies need) and still passes the suite on the machine it is
 * tested on, with a warning at start; older versions are refused at start with a clear message.
 */
export type NodeSupport =
  | { kind: 'supported' }
  | { kind: 'end_of_life'; message: string }
  | { kind: 'refused'; message: string };

export function nodeSupport(version: string): NodeSupport {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 12)) return { kind: 'supported' };
  if (major === 20 && minor >= 19) {
    return {
      kind: 'end_of_life',
      message: `Node.js ${version} reached its end of life on 2026-04-30: the gateway supports Node 22 (22.12+) and 24 LTS; Node 20 still runs it but will be refused by a later release`,
    };
  }
  return {
    kind: 'refused',
    message: `Node.js ${version} cannot run this gateway: it needs Node 22 (22.12+) or 24 LTS (Node 20.19+ still starts, end of life)`,
  };
}
