import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { AUDIT_INDEX_SLACK_MS, AuditIndex } from '../ledger/redis/audit-index.js';
import { accountKeys, auditNodeKey } from '../ledger/redis/redis-keys.js';
import {
  defineScriptSet,
  type LoadedScript,
  loadScriptFiles,
  type ScriptRunner,
  scriptDirOf,
} from '../store/lua-scripts.js';
import {
  AUDIT_ORDER_WINDOW_MS,
  type AuditBackend,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  matches,
  publicRecord,
  type StoredAudit,
} from './records.js';

/**
 * The audit log on Redis, cluster-safe: one stream per account in the account's own slot
 * (`<p>:{a:<id>}:audit-log`, so the ledger's settle and lease scripts write a charged call's record in the
 * step that charges it), one stream for records of no account (`<p>:{audit}:node`: admin changes, unknown
 * keys), and the index of accounts with records (core/ledger/redis/audit-index.ts). Stream ids are write
 * times; every write trims its stream by age (exact MINID).
 *
 * Reads: an account's reader scans its stream. The node-wide reader merges the node stream and the account
 * streams, newest first, in one total order — stream id, then the stream's tag ('' for the node stream, else
 * the account id), so a record's id is `<ms>-<seq>` or `<ms>-<seq>-<account>` — and opens an account's stream
 * only once the index says it may hold a record as new as the page's next one. Every command names one key:
 * nothing needs two slots at once.
 */

type Client = Redis | Cluster;
type Entry = [id: string, fields: string[]];

/** A place in the merged order. */
interface Pos {
  ms: number;
  seq: number;
  tag: string;
}

/** > 0 when `a` is newer than `b`. */
function cmp(a: Pos, b: Pos): number {
  if (a.ms !== b.ms) return a.ms - b.ms;
  if (a.seq !== b.seq) return a.seq - b.seq;
  return a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0;
}

function posOf(streamId: string, tag: string): Pos {
  const dash = streamId.indexOf('-');
  return { ms: Number(streamId.slice(0, dash)), seq: Number(streamId.slice(dash + 1)), tag };
}

/** A record's place in the readers' order: its time (clamped to its write window), then its stream position. */
interface Place {
  k: number;
  pos: Pos;
}

interface Placed extends Place {
  record: AuditRecord;
}

/** > 0 when `a` comes before `b` (newer). */
function placeCmp(a: Place, b: Place): number {
  if (a.k !== b.k) return a.k - b.k;
  return cmp(a.pos, b.pos);
}

/** A record's id: its place, `<k>-<ms>-<seq>[-<tag>]` (the stream id and the stream's tag). */
function idOf(k: number, pos: Pos): string {
  return pos.tag === '' ? `${k}-${pos.ms}-${pos.seq}` : `${k}-${pos.ms}-${pos.seq}-${pos.tag}`;
}

/** Keeps `list` newest place first (records mostly arrive in order: searched from the end). */
function insertPlaced(list: Placed[], p: Placed): void {
  let i = list.length;
  while (i > 0 && placeCmp(list[i - 1]!, p) < 0) i--;
  list.splice(i, 0, p);
}

/**
 * A record id (route-checked) as a place. A bare `<ms>` means: placed before that millisecond; `<ms>-<seq>`
 * (an id of the write-ordered reader of before) is read as placed at its write time.
 */
function parseCursor(before: string): Place {
  const [a, b, c, ...tag] = before.split('-');
  if (b === undefined) return { k: Number(a), pos: { ms: -1, seq: -1, tag: '' } };
  if (c === undefined || !/^\d+$/.test(c)) {
    const rest = c === undefined ? tag : [c, ...tag];
    return { k: Number(a), pos: { ms: Number(a), seq: Number(b), tag: rest.join('-') } };
  }
  return { k: Number(a), pos: { ms: Number(b), seq: Number(c), tag: tag.join('-') } };
}

/** XREVRANGE end for a stream tagged `tag`: its entries strictly before `c` in the merged order. */
function endBefore(c: Pos | undefined, tag: string): string {
  if (c === undefined) return '+';
  if (c.seq < 0) return `(${c.ms}-0`;
  return tag < c.tag ? `${c.ms}-${c.seq}` : `(${c.ms}-${c.seq}`;
}

interface Source {
  key: string;
  tag: string;
  /** No entry of this stream is newer than this (ms): Infinity when unknown. */
  bound: number;
  rows: Entry[];
  i: number;
  end: string;
  chunk: number;
  more: boolean;
}

const FIRST_CHUNK = 8;
/** Accounts the hourly prune handles per round. */
const PRUNE_PAGE = 500;
const MAX_CHUNK = 512;

/** Sources by their next entry, newest on top. */
class Heap {
  private readonly a: Source[] = [];
  private head(s: Source): Pos {
    return posOf(s.rows[s.i]![0], s.tag);
  }
  get size(): number {
    return this.a.length;
  }
  topMs(): number {
    return this.a.length === 0 ? Number.NEGATIVE_INFINITY : this.head(this.a[0]!).ms;
  }
  push(s: Source): void {
    const a = this.a;
    a.push(s);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (cmp(this.head(a[i]!), this.head(a[p]!)) <= 0) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Source | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    a[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && cmp(this.head(a[l]!), this.head(a[m]!)) > 0) m = l;
      if (r < a.length && cmp(this.head(a[r]!), this.head(a[m]!)) > 0) m = r;
      if (m === i) return top;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }
}

type AuditScript = 'trim-account' | 'forget-accounts';

export class RedisAudit implements AuditBackend {
  private readonly index: AuditIndex;
  private readonly nodeKey: string;
  private readonly run: ScriptRunner<AuditScript>;

  constructor(
    private readonly redis: Client,
    private readonly prefix: string,
    private readonly scanBudget: number,
    private readonly orderWindowMs = AUDIT_ORDER_WINDOW_MS,
  ) {
    this.index = new AuditIndex(redis, prefix);
    this.nodeKey = auditNodeKey(prefix);
    this.run = defineScriptSet(redis, auditScripts());
  }

  private accountKey(account: string): string {
    return accountKeys(this.prefix, account).auditLog;
  }

  /**
   * The batch's accounts are confirmed in the index first (a stream the index does not list is never
   * written); then one XADD per record, issued together (ioredis auto-pipelining sends them in one write per
   * node; no multi-key pipeline, so Cluster is fine).
   */
  async write(batch: readonly StoredAudit[], retentionMs: number, nowMs: number): Promise<void> {
    const minId = String(Math.max(0, nowMs - retentionMs));
    const accounts = new Set<string>();
    for (const r of batch) if (r.account !== undefined) accounts.add(r.account);
    await Promise.all([...accounts].map((a) => this.index.confirm(a)));
    await Promise.all(
      batch.map(({ account, ...r }) =>
        this.redis.xadd(
          account !== undefined ? this.accountKey(account) : this.nodeKey,
          'MINID',
          minId,
          '*',
          'r',
          JSON.stringify(r),
        ),
      ),
    );
  }

  /**
   * Newest first in the records' time order, filters applied to each entry. The streams are merged in write
   * order (stream ids are write times, at or after the record's own time) and reordered on the way out: a
   * record's place is its time, clamped to [write time − AUDIT_ORDER_WINDOW_MS, write time], then its stream
   * id and stream; a matching record waits until the merge has passed below its place (nothing unread can
   * then come before it). A cursor is the last record's place; the next page rescans the window above it.
   * `since` bounds the range (stream ids are at or after the record's time), `until` is only filtered.
   * Complete by construction: when `scanBudget` entries (and stream reads) were spent before the page filled,
   * the answer says `has_more` with a cursor (the last record given, or the merge's place), never a silently
   * short page.
   */
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a k-way merge whose cursor, scan budget and page are one state: the rule that a page is never silently short would otherwise span functions
  async list(q: AuditQuery): Promise<AuditPage> {
    const cursor = q.before !== undefined ? parseCursor(q.before) : undefined;
    // Records placed before the cursor were written at most the window after their place.
    const scanFrom: Pos | undefined =
      cursor === undefined ? undefined : { ms: cursor.k + this.orderWindowMs + 1, seq: -1, tag: '' };
    const start = q.sinceMs !== undefined ? String(q.sinceMs) : '-';
    const candidates: Omit<Source, 'rows' | 'i' | 'end' | 'chunk' | 'more'>[] = [];
    if (q.account !== undefined) {
      candidates.push({ key: this.accountKey(q.account), tag: q.account, bound: Number.POSITIVE_INFINITY });
    } else {
      candidates.push({ key: this.nodeKey, tag: '', bound: Number.POSITIVE_INFINITY });
      const min = q.sinceMs !== undefined ? String(q.sinceMs - AUDIT_INDEX_SLACK_MS) : '-inf';
      const flat = await this.redis.zrangebyscore(this.index.key, min, '+inf', 'WITHSCORES');
      const listed: (typeof candidates)[number][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const account = flat[i]!;
        listed.push({
          key: this.accountKey(account),
          tag: account,
          bound: Number(flat[i + 1]) + AUDIT_INDEX_SLACK_MS,
        });
      }
      listed.sort((a, b) => b.bound - a.bound);
      candidates.push(...listed);
    }
    let spent = 0;
    const fill = async (s: Source): Promise<void> => {
      spent++;
      const rows = (await this.redis.xrevrange(s.key, s.end, start, 'COUNT', s.chunk)) as Entry[];
      s.more = rows.length === s.chunk;
      s.rows = rows;
      s.i = 0;
      if (rows.length > 0) s.end = `(${rows[rows.length - 1]![0]}`;
      s.chunk = Math.min(MAX_CHUNK, s.chunk * 2);
    };
    const heap = new Heap();
    const out: AuditRecord[] = [];
    // Matching records read but not yet given, newest place first.
    const waiting: Placed[] = [];
    const full = (): AuditPage => {
      const data = out.slice(0, q.limit);
      return { data, has_more: true, next_before: data[data.length - 1]!.id };
    };
    /**
     * Gives the waiting records placed at or after `fromMs` (all of them when undefined): once the merge read
     * the entry written at `fromMs`, every unread entry is placed before them (written no later, so placed no
     * later, and after them in the stream). True once the page is full.
     */
    const release = (fromMs: number | undefined): boolean => {
      while (waiting.length > 0 && (fromMs === undefined || waiting[0]!.k >= fromMs)) {
        out.push(waiting.shift()!.record);
        if (out.length > q.limit) return true;
      }
      return false;
    };
    let next = 0;
    for (;;) {
      // Open every stream that may hold an entry as new as the merge's next one (in one batch of reads).
      const opening: Source[] = [];
      const top = heap.topMs();
      while (
        next < candidates.length &&
        (heap.size + opening.length === 0 || candidates[next]!.bound >= top)
      ) {
        const c = candidates[next++]!;
        opening.push({
          ...c,
          rows: [],
          i: 0,
          end: endBefore(scanFrom, c.tag),
          chunk: FIRST_CHUNK,
          more: true,
        });
        if (heap.size === 0) break;
      }
      if (opening.length > 0) {
        await Promise.all(opening.map(fill));
        for (const s of opening) if (s.rows.length > 0) heap.push(s);
        if (heap.size === 0 || next < candidates.length) continue;
      }
      const s = heap.pop();
      if (s === undefined) {
        if (release(undefined)) return full();
        return { data: out, has_more: false, next_before: null };
      }
      const [streamId, fields] = s.rows[s.i++]!;
      const pos = posOf(streamId, s.tag);
      const r = JSON.parse(fields[1] ?? '{}') as StoredAudit;
      const ts = Date.parse(r.timestamp);
      const k = Math.min(pos.ms, Math.max(pos.ms - this.orderWindowMs, Number.isFinite(ts) ? ts : pos.ms));
      if ((cursor === undefined || placeCmp({ k, pos }, cursor) < 0) && matches(r, q)) {
        insertPlaced(waiting, { k, pos, record: publicRecord(idOf(k, pos), r) });
      }
      // The budget counts what no earlier page read (the window above a cursor is read again).
      if (cursor === undefined || cmp(pos, cursor.pos) < 0) spent++;
      if (release(pos.ms)) return full();
      if (spent >= this.scanBudget && waiting.length === 0) {
        // Every record placed after (pos.ms, this entry) was read, and the matching ones given: that place is
        // the cursor. Not while records wait to be given (the next page would read them again: the scan goes
        // on, at most one window further).
        const at: Place = { k: pos.ms, pos };
        if (cursor === undefined || placeCmp(at, cursor) < 0) {
          return { data: out, has_more: true, next_before: idOf(at.k, at.pos) };
        }
      }
      if (s.i < s.rows.length) heap.push(s);
      else if (s.more) {
        await fill(s);
        if (s.rows.length > 0) heap.push(s);
      }
    }
  }

  /**
   * Every stream is trimmed by age at each write; here all of them are, hourly: the node stream, and each
   * listed account's (deleted when nothing is left). Accounts no writer confirmed for longer than the
   * retention (plus the index's slack) and whose streams are gone then leave the index — only if still
   * unconfirmed, so a writer confirming meanwhile keeps its account listed.
   */
  async prune(cutoffMs: number): Promise<void> {
    await this.redis.xtrim(this.nodeKey, 'MINID', String(cutoffMs));
    const stale = cutoffMs - AUDIT_INDEX_SLACK_MS;
    for (let offset = 0; ; offset += PRUNE_PAGE) {
      const flat = await this.redis.zrange(this.index.key, offset, offset + PRUNE_PAGE - 1, 'WITHSCORES');
      if (flat.length === 0) return;
      const accounts: string[] = [];
      const scores: number[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        accounts.push(flat[i]!);
        scores.push(Number(flat[i + 1]));
      }
      const left = await Promise.all(
        accounts.map((a) => this.run('trim-account', [this.accountKey(a)], [String(cutoffMs)])),
      );
      const gone = accounts.filter((_, i) => Number(left[i]) === 0 && scores[i]! <= stale);
      if (gone.length > 0) {
        const dropped = Number(await this.run('forget-accounts', [this.index.key], [String(stale), ...gone]));
        offset -= dropped; // the ranks after them moved down
      }
    }
  }
}

/** The prune's two Lua steps (core/audit/redis/*.lua), loaded once under version-stamped `gwAudit_*` names. */
let scripts: Map<AuditScript, LoadedScript> | undefined;
function auditScripts(): Map<AuditScript, LoadedScript> {
  scripts ??= loadScriptFiles<AuditScript>({
    dir: join(scriptDirOf(import.meta.url, join('redis', 'trim-account-1.lua')), 'redis'),
    files: ['trim-account-1', 'forget-accounts-1'],
    prefix: 'gwAudit',
    version: 1,
  });
  return scripts;
}
