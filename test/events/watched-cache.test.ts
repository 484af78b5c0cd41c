import { describe, expect, it } from 'vitest';
import { Events } from '../../core/events/events.js';
import type { WebhookStore } from '../../core/events/types.js';
import type { KeyMeta } from '../../core/ledger/types.js';
import type { Logger } from '../../core/log.js';

/**
 * Which accounts a paid call's spend hook looks up (core/events/events.ts `watched`): the hook asks the store
 * whether the account has a webhook or alert settings, and remembers the answer. A "watches nothing" is kept
 * until some account gains a watch (the store's `watches` signal, `watchesChanged`), so 10,000 idle keys in
 * turn do not cost a store read per call; a watch gained anywhere is seen at the next call after the signal.
 * The store here counts its reads and answers from a set; everything else about it is not reached.
 */
function countingStore(): {
  store: WebhookStore;
  watching: Set<string>;
  reads: () => number;
  spends: string[];
  hold: () => (v: boolean) => void;
} {
  const watching = new Set<string>();
  const spends: string[] = [];
  let reads = 0;
  /** When set, the next read waits for this answer instead of reading the set. */
  let held: Promise<boolean> | undefined;
  const store = {
    async hasWatchedKeys(accountId: string) {
      reads++;
      if (held) {
        const p = held;
        held = undefined;
        return p;
      }
      return watching.has(accountId);
    },
    async onSpend(key: { accountId: string }) {
      spends.push(key.accountId);
    },
  } as unknown as WebhookStore;
  return {
    store,
    watching,
    reads: () => reads,
    spends,
    hold: () => {
      let answer!: (v: boolean) => void;
      held = new Promise<boolean>((r) => {
        answer = r;
      });
      return answer;
    },
  };
}

const silentLogger = () => ({ info() {}, warn() {}, error() {}, debug() {} }) as unknown as Logger;

const OPTS = {
  maxAttempts: 3,
  timeoutMs: 1000,
  allowPrivateUrls: true,
  retryBaseMs: 1000,
  pollMs: 1000,
  alertSweepMs: 30_000,
};

const key = (accountId: string): KeyMeta =>
  ({ accountId, keyId: `k-${accountId}`, parentKeyId: null }) as unknown as KeyMeta;

/** Lets the hook's background steps run: they wait only on the counting store's resolved promises (microtasks,
 *  all run before the next turn of the loop). */
const settle = () => new Promise((r) => setImmediate(r));

/** The `watched` cache's clock, moved by the test. */
function fakeClock(): { now(): number; advance(ms: number): void } {
  let t = 1_000_000;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

describe('Events: the spend hook remembers which accounts watch nothing', () => {
  it.each([
    { wired: true, lifetimeMs: 600_000 },
    { wired: false, lifetimeMs: 5_000 },
  ])(
    'a "nothing" is kept $lifetimeMs ms (signal wired: $wired): one store read until then; a watch gained elsewhere is seen after',
    async ({ wired, lifetimeMs }) => {
      const s = countingStore();
      const clock = fakeClock();
      const events = new Events(s.store, OPTS, silentLogger(), clock);
      if (wired) events.signalWith(async () => 1);
      events.spent(key('a'), 1000, 9000);
      await settle();
      expect(s.reads()).toBe(1);
      // Another process registers a webhook and its signal never arrives (or there is none): only the lifetime ends
      // the "nothing". With the signal wired that is far past the old 5 s.
      s.watching.add('a');
      clock.advance(lifetimeMs - 1);
      for (let i = 0; i < 5; i++) events.spent(key('a'), 1000, 8000 - i * 1000);
      await settle();
      expect(s.reads()).toBe(1);
      expect(s.spends).toEqual([]);
      clock.advance(2);
      events.spent(key('a'), 1000, 2000);
      await settle();
      expect(s.reads()).toBe(2);
      expect(s.spends).toEqual(['a']);
      await events.close();
    },
  );

  it('an account gaining a watch anywhere (watchesChanged) makes every "nothing" stale: the next call asks again', async () => {
    const s = countingStore();
    const events = new Events(s.store, OPTS, silentLogger());
    events.signalWith(async () => 1);
    events.spent(key('a'), 1000, 9000);
    events.spent(key('b'), 1000, 9000);
    await settle();
    expect(s.reads()).toBe(2);
    // Another process registered a webhook on 'a' and signalled it.
    s.watching.add('a');
    events.watchesChanged();
    events.spent(key('a'), 1000, 8000);
    events.spent(key('b'), 1000, 8000);
    await settle();
    expect(s.reads()).toBe(4);
    expect(s.spends).toEqual(['a']);
    // 'b' is known to watch nothing again at the new generation; 'a' is known to watch.
    events.spent(key('a'), 1000, 7000);
    events.spent(key('b'), 1000, 7000);
    await settle();
    expect(s.reads()).toBe(4);
    expect(s.spends).toEqual(['a', 'a']);
    await events.close();
  });

  it('a "nothing" read before a watch was signalled and answered after it is not kept', async () => {
    const s = countingStore();
    const events = new Events(s.store, OPTS, silentLogger());
    events.signalWith(async () => 1);
    const answer = s.hold();
    events.spent(key('a'), 1000, 9000);
    await settle();
    expect(s.reads()).toBe(1);
    // The watch is stored and signalled while the store's "nothing" is on its way.
    s.watching.add('a');
    events.watchesChanged();
    answer(false);
    await settle();
    expect(s.spends).toEqual([]);
    events.spent(key('a'), 1000, 8000);
    await settle();
    expect(s.reads()).toBe(2);
    expect(s.spends).toEqual(['a']);
    await events.close();
  });

  it("this process's own change (touched) announces it once and counts the account as watching at once", async () => {
    const s = countingStore();
    const events = new Events(s.store, OPTS, silentLogger());
    let announced = 0;
    events.signalWith(async () => ++announced);
    events.spent(key('a'), 1000, 9000);
    await settle();
    s.watching.add('a');
    events.touched('a');
    expect(announced).toBe(1);
    events.spent(key('a'), 1000, 8000);
    await settle();
    expect(s.reads()).toBe(1);
    expect(s.spends).toEqual(['a']);
    await events.close();
  });
});
