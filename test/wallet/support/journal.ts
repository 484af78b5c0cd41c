import type { JournalEntry } from '../../../core/wallet/store/proof-store.js';

/** A fresh journal entry of `kind` at `mint`: nothing spent, nothing submitted yet. */
export function journalEntry(
  id: string,
  kind: JournalEntry['kind'] = 'send',
  mint = 'http://mint.test',
): JournalEntry {
  return {
    id,
    kind,
    mint,
    unit: 'sat',
    createdAt: Date.now(),
    seedId: 'seed',
    inputYs: [],
    inputTotal: 0,
    counters: [],
    submitted: false,
  };
}
