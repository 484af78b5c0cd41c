/**
 * Ownership of provider objects. The provider stores responses, files and batches under the ONE provider key
 * the gateway shares between all its callers, so the provider's ids are readable by anyone who knows them.
 * The gateway records, when an object is created, which key created it; every later read, list, cancel or
 * delete of that id answers only for that key, and 404 for every other key (the object's existence is not
 * revealed). One store for the three kinds, in the money store (SQLite table / Redis keys).
 */

export type ObjectKind = 'response' | 'file' | 'batch';

export interface OwnedObject {
  /** The provider's id (`resp_…`, `file-…`, `batch_…`). */
  id: string;
  kind: ObjectKind;
  accountId: string;
  /** The public key id (16 hex) of the key that created it: the only key it answers for. */
  keyId: string;
  createdAtMs: number;
  /**
   * What the gateway needs later about the object, JSON (kept as text): a batch input file's priced summary
   * (core/batches/batch-input.ts), a batch's settlement job id.
   */
  meta: string | null;
}

export interface ObjectOwners {
  /** Records the owner. The first record of an id wins (a repeat changes nothing). */
  record(o: OwnedObject): Promise<void>;
  get(id: string): Promise<OwnedObject | null>;
  /**
   * Ids of `kind` the key owns, newest first (creation time, then id, both descending), at most `limit`; with
   * `after`, only those after that id in this order (none when the key owns no such id).
   */
  list(keyId: string, kind: ObjectKind, limit: number, after?: string): Promise<string[]>;
  /**
   * Sets the `meta` of a recorded object (a stored response's billed tokens, written by the settle stage once the
   * call is charged). Nothing when the id is not recorded. Only the request that created the object writes it.
   */
  annotate(id: string, meta: string): Promise<void>;
  /** Forgets an object (after the provider deleted it). */
  forget(o: Pick<OwnedObject, 'id' | 'kind' | 'keyId'>): Promise<void>;
}

/**
 * A stored response's `meta`: the input and output tokens its call was billed for. The provider bills them all
 * as input to a call that continues it (`previous_response_id`): input already includes the earlier chain.
 */
export interface StoredTokens {
  input_tokens: number;
  output_tokens: number;
}

/** The billed tokens a stored response's record carries, or undefined (recorded without them). */
export function storedTokens(o: OwnedObject): StoredTokens | undefined {
  if (o.meta === null) return undefined;
  try {
    const m = JSON.parse(o.meta) as Partial<StoredTokens> | null;
    const ok = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
    return m !== null && ok(m.input_tokens) && ok(m.output_tokens)
      ? { input_tokens: m.input_tokens, output_tokens: m.output_tokens }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The object when `keyId` owns it, else null: the one ownership check of every route. */
export async function ownedBy(
  owners: ObjectOwners,
  id: string,
  kind: ObjectKind,
  keyId: string,
): Promise<OwnedObject | null> {
  const o = await owners.get(id);
  return o !== null && o.kind === kind && o.keyId === keyId ? o : null;
}
