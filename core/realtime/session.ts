import type { RawData, WebSocket } from 'ws';
import { toGatewayError } from '../errors.js';
import type { MessageSocket } from '../http/exchange.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import { ownedId } from '../ledger/owner.js';
import type { Credential, Ledger, RateLimits } from '../ledger/types.js';
import type { Logger } from '../log.js';
import { emptyUsage, inputTotal, outputTotal, type Usage } from '../metering/usage.js';
import type { CostResult } from '../pricing/types.js';
import { CLOSE } from './close-codes.js';
import type { RealtimePricer } from './realtime-pricer.js';
import { responseUsage, transcriptionUsage } from './realtime-usage.js';

/**
 * One Realtime session: the client's socket, the provider's socket, and the money between them.
 *
 * Paid as it goes (docs/pricing.md, "Realtime"): the session always holds a reservation (one or more ledger
 * reservations, `chunks`) covering its NEXT response: the context so far (the last response's input and
 * output tokens), the text and audio appended since, the transcription of that audio, and the response's
 * maximum output; each at the dearest rate of its direction. No client event reaches the provider unless that
 * bound is covered: when an event would raise it above what is held (audio appended, a bigger
 * `max_output_tokens`), one more reservation is made first and the event waits; when the balance cannot, the
 * client gets an `error` event `insufficient_balance` and the close code 4402, and nothing more is relayed.
 * Server-VAD responses start without a client event: the standing reservation covers them the same way.
 *
 * After each `response.done` the response's cost (its `usage`) and the transcriptions since are settled
 * against the held reservations (split so that no part exceeds its reservation), the client gets a
 * `gateway.cost` event, and the next bound is reserved before any further client event is relayed.
 *
 * When the session ends (either side closes, a limit, a shutdown), a response in flight is waited for (its
 * `response.done`, bounded by `drainMs`) and settled; if the provider's socket is gone first, what arrived is
 * charged (marked estimated); what is left of the reservation is released. A crash leaves the reservations
 * (ids from `ownedId`) to the orphan release.
 */

export interface SessionLimits {
  idleTimeoutMs: number;
  maxSessionMs: number;
  maxBufferedBytes: number;
  slowReaderMs: number;
  audioTokensPerSecond: number;
  audioAllowanceMs: number;
  /** How long a closing session waits for the provider's `response.done` of a response in flight. */
  drainMs: number;
}

export interface SessionDeps {
  ledger: Ledger;
  pricer: RealtimePricer;
  limits: SessionLimits;
  /** The rate limits the ledger checks; a session's later reservations are made without them. */
  reservationExpiryMs: number;
  log: Logger;
  /** The model's maximum output tokens: `inf` and an absent maximum are clamped to it. */
  maxOutputTokens: number;
}

export interface SessionStart {
  id: string;
  accountId: string;
  credential: Credential;
  /** The first reservation, made by the upgrade before the provider was called. */
  first: { id: string; msat: number };
}

/** What a session did, reported once when it ended. */
export interface SessionSummary {
  id: string;
  chargedMsat: number;
  responses: number;
  seconds: number;
  closeCode: number;
}

type Obj = Record<string, unknown>;

/** What a client event adds to the next response's bound. */
interface Added {
  text: number;
  audio: number;
  maxOutput?: number;
  /** 1 for a `response.create`: one more response the reservation must cover while others run. */
  responses?: number;
}

/** A limit without bound for the later reservations of an admitted session (its first one counted them). */
const UNLIMITED: RateLimits = {
  requestsPerMinute: Number.MAX_SAFE_INTEGER,
  tokensPerHour: Number.MAX_SAFE_INTEGER,
  concurrent: Number.MAX_SAFE_INTEGER,
};

/** Bytes of input audio per millisecond, by format (the smallest rate for formats not named: more ms per byte). */
function bytesPerMs(format: string | undefined): number {
  if (format === undefined || format === 'pcm16' || format === 'audio/pcm') return 48; // 24 kHz, 16-bit mono
  return 8; // G.711 μ-law / A-law: 8 kHz, 8-bit; and anything unknown
}

/** The event type at the start of a JSON text frame (after an optional `event_id`, as OpenAI sends it), without
 *  parsing it (`undefined`: the frame is parsed). */
const TYPE_AT_HEAD = /^\s*\{\s*(?:"event_id"\s*:\s*"[^"\\]{0,200}"\s*,\s*)?"type"\s*:\s*"([^"\\]{1,100})"/;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

function outputLimit(v: unknown, max: number): number | undefined {
  if (v === 'inf') return max;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return Math.min(v, max);
  return undefined;
}

/** Either side as a reader (its backlog) and a source (paused while the other side's reader is behind). */
interface Side {
  readonly bufferedAmount: number;
  pause(): void;
  resume(): void;
}

interface Pending {
  data: Buffer;
  event: Obj;
}

export class RealtimeSession {
  private readonly startedAt = Date.now();
  private chunks: { id: string; msat: number }[];
  private reservedMsat: number;
  /** Input tokens of the context so far (the last response's input + output). */
  private contextTokens = 0;
  /** Text (bytes of client events other than audio appends, a bound of their tokens) and audio since. */
  private textTokens = 0;
  private audioMs = 0;
  /** What was appended when the response in flight started (it is in that response's input). */
  private snapshot: { text: number; audio: number } | undefined;
  private maxOutput: number;
  private audioFormat: string | undefined;
  private transcriptionModel: string | undefined;
  /** Transcriptions billed since the last settlement (settled with the next response). */
  private pendingMsat = 0;
  private pendingUsage: Usage = emptyUsage();
  /** A response is in flight at the provider (response.created or a server-VAD commit, until response.done). */
  private active = false;
  /** Responses the provider runs now (response.created, not done) and ones asked for and not yet created:
   *  out-of-band responses (`conversation: "none"`) may run side by side, each needs its bound. */
  private running = 0;
  private requested = 0;
  private outTextDeltas = 0;
  private outAudioBytes = 0;
  /** Client events waiting for a money step (a reservation, a settlement). */
  private inbox: Pending[] = [];
  private inboxBytes = 0;
  private busy = false;
  /** Called when a money step ends (`busy` turned false). */
  private idleWaiters: (() => void)[] = [];
  private ending: Promise<void> | undefined;
  private endCode: number = CLOSE.normal;
  private chargedMsat = 0;
  private responses = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly maxTimer: NodeJS.Timeout;
  private watch: NodeJS.Timeout | undefined;
  private upstreamOpen = true;
  private clientOpen = true;
  /** False once the client was found too slow: what the provider still sends is metered, not relayed. */
  private relayToClient = true;
  private doneWaiter: (() => void) | undefined;

  constructor(
    private readonly deps: SessionDeps,
    private readonly start: SessionStart,
    private readonly client: MessageSocket,
    private readonly upstream: WebSocket,
    private readonly onEnd: (s: SessionSummary) => void,
  ) {
    this.chunks = [start.first];
    this.reservedMsat = start.first.msat;
    this.maxOutput = deps.maxOutputTokens;
    client.onMessage((data, isBinary) => this.fromClient(data, isBinary));
    client.onClose(() => {
      this.clientOpen = false;
      void this.end(CLOSE.normal, 'client closed');
    });
    upstream.on('message', (data, isBinary) => this.fromUpstream(data, isBinary));
    upstream.on('close', () => {
      this.upstreamOpen = false;
      this.doneWaiter?.();
      if (this.ending === undefined) {
        this.sendError('upstream_error', 'The provider closed the session');
        void this.end(CLOSE.badGateway, 'provider closed the session');
      }
    });
    upstream.on('error', () => undefined);
    this.touch();
    this.maxTimer = setTimeout(
      () => void this.end(CLOSE.maxDuration, 'maximum session length reached'),
      deps.limits.maxSessionMs,
    );
    this.maxTimer.unref();
  }

  get accountId(): string {
    return this.start.accountId;
  }

  /** Relays what the provider sent before the session was listening (in order), then reads on. */
  replay(early: readonly [RawData, boolean][]): void {
    for (const [d, b] of early) this.fromUpstream(d, b);
    if (this.upstream.readyState !== this.upstream.OPEN && this.ending === undefined) {
      this.upstreamOpen = false;
      this.sendError('upstream_error', 'The provider closed the session');
      void this.end(CLOSE.badGateway, 'provider closed the session');
    }
  }

  /** Ends the session with `code` after settling what was used (shutdown: 1001). */
  close(code: number, reason: string): Promise<void> {
    return this.end(code, reason);
  }

  // ------------------------------------------------------------------------------------------ client → provider

  private fromClient(buf: Buffer, isBinary: boolean): void {
    if (this.ending !== undefined) return;
    this.touch();
    if (isBinary) {
      this.sendError('invalid_request', 'Binary frames are not accepted: send JSON text events');
      void this.end(CLOSE.unsupportedData, 'binary frame');
      return;
    }
    let event: Obj | undefined;
    try {
      event = obj(JSON.parse(buf.toString('utf8')));
    } catch {
      event = undefined;
    }
    if (event === undefined || typeof event.type !== 'string') {
      this.sendError('invalid_json', 'Each frame must be a JSON object with a string "type"');
      void this.end(CLOSE.invalidPayload, 'invalid event');
      return;
    }
    this.inbox.push({ data: buf, event });
    this.inboxBytes += buf.length;
    if (this.inboxBytes > this.deps.limits.maxBufferedBytes) {
      this.client.pause();
      // A pause does not stop every engine reading (uWS cannot): what a client sends on is bounded here.
      if (this.inboxBytes > 2 * this.deps.limits.maxBufferedBytes) {
        void this.end(CLOSE.slowReader, 'client sends faster than it is relayed');
        return;
      }
    }
    try {
      this.drainInbox();
    } catch (err) {
      // A bound that cannot be priced (a transcription model without a price): nothing is relayed unpaid.
      this.fail(err);
    }
  }

  /** Relays the client's events in order, each once the reservation covers what it adds. */
  private drainInbox(): void {
    while (!this.busy && this.ending === undefined && this.inbox.length > 0) {
      const next = this.inbox[0]!;
      const added = this.account(next.event);
      const need = this.need(added);
      if (need > this.reservedMsat) {
        this.busy = true;
        this.extend(need, added).then(
          (ok) => {
            this.stepDone();
            if (ok) this.drainSafely();
          },
          (err) => {
            this.stepDone();
            this.fail(err);
          },
        );
        return;
      }
      this.inbox.shift();
      this.inboxBytes -= next.data.length;
      this.commit(added);
      this.toUpstream(next.data);
    }
    if (this.client.isPaused && this.inboxBytes <= this.deps.limits.maxBufferedBytes / 2)
      this.client.resume();
  }

  private drainSafely(): void {
    try {
      this.drainInbox();
    } catch (err) {
      this.fail(err);
    }
  }

  /** What an event adds to the next response's bound (not applied until it is relayed). */
  private account(e: Obj): Added {
    const type = e.type as string;
    if (type === 'input_audio_buffer.append') {
      const audio = typeof e.audio === 'string' ? e.audio : '';
      const bytes = Math.floor((audio.length * 3) / 4);
      return { text: 0, audio: Math.ceil(bytes / bytesPerMs(this.audioFormat)) };
    }
    const added: Added = {
      text: JSON.stringify(e).length,
      audio: 0,
    };
    if (type === 'session.update') {
      const s = obj(e.session);
      const limit = outputLimit(
        s?.max_output_tokens ?? s?.max_response_output_tokens,
        this.deps.maxOutputTokens,
      );
      if (limit !== undefined) added.maxOutput = limit;
      // A session that lowers its maximum keeps the one reserved for until it is relayed (never below).
    } else if (type === 'response.create') {
      added.responses = 1;
      const r = obj(e.response);
      const limit = outputLimit(
        r?.max_output_tokens ?? r?.max_response_output_tokens,
        this.deps.maxOutputTokens,
      );
      if (limit !== undefined && limit > this.maxOutput) added.maxOutput = limit;
    }
    return added;
  }

  private commit(added: Added): void {
    this.textTokens += added.text;
    this.audioMs += added.audio;
    if (added.maxOutput !== undefined) this.maxOutput = Math.max(added.maxOutput, this.maxOutput);
    this.requested += added.responses ?? 0;
  }

  /** The bound the reservation must cover with `added` relayed (allowance: audio reserved ahead). */
  private need(added: Added, allowanceMs = 0): number {
    const { audioTokensPerSecond } = this.deps.limits;
    const audioMs = this.audioMs + added.audio + allowanceMs;
    const audioTokens = Math.ceil((audioMs * audioTokensPerSecond) / 1000);
    const input = this.contextTokens + this.textTokens + added.text + audioTokens;
    const output = Math.max(this.maxOutput, added.maxOutput ?? 0);
    const responses = Math.max(1, this.running + this.requested + (added.responses ?? 0));
    let bound = this.deps.pricer.responseBound(input, output) * responses + this.pendingMsat;
    if (this.transcriptionModel !== undefined) {
      bound += this.deps.pricer.transcriptionBound(this.transcriptionModel, audioTokens, audioMs);
    }
    return bound;
  }

  /** One more reservation so that `need` is covered (with the audio allowance when it affords it). */
  private async extend(need: number, added: Added): Promise<boolean> {
    const want = Math.max(need, this.need(added, this.deps.limits.audioAllowanceMs));
    return this.reserve(want - this.reservedMsat, need - this.reservedMsat);
  }

  private async reserve(maxMsat: number, minMsat: number): Promise<boolean> {
    const id = ownedId('r');
    const r = await this.deps.ledger.admit({
      credential: this.start.credential,
      requestId: id,
      model: this.deps.pricer.model,
      maxMsat,
      minMsat: Math.min(minMsat, maxMsat),
      expiresInMs: this.deps.limits.maxSessionMs + this.deps.reservationExpiryMs,
      limits: UNLIMITED,
      exactPath: true,
    });
    if (!r.ok) {
      if (r.code === 'payment_required') {
        this.sendError('insufficient_balance', 'The balance cannot cover the next response', {
          balance: r.balance,
          needed: r.required,
        });
        void this.end(CLOSE.insufficientBalance, 'insufficient balance');
      } else {
        const err = ledgerRefusalToError(r);
        this.sendError(err.code, err.message);
        void this.end(CLOSE.insufficientBalance, err.code);
      }
      return false;
    }
    this.chunks.push({ id, msat: r.reservedMsat });
    this.reservedMsat += r.reservedMsat;
    return true;
  }

  private toUpstream(data: Buffer): void {
    if (!this.upstreamOpen) return;
    this.upstream.send(data, { binary: false });
    const backlog = this.upstream.bufferedAmount;
    const bound = this.deps.limits.maxBufferedBytes;
    if (backlog > 2 * bound) {
      // The client was paused at the bound and sent on (an engine that cannot stop reading it: uWS).
      void this.end(CLOSE.slowReader, 'provider too slow');
    } else if (backlog > bound) this.slow(this.upstream, this.client);
  }

  // ------------------------------------------------------------------------------------------ provider → client

  private fromUpstream(data: RawData, isBinary: boolean): void {
    const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (this.clientOpen && this.relayToClient) {
      this.client.send(buf, isBinary);
      if (this.client.bufferedAmount > this.deps.limits.maxBufferedBytes)
        this.slow(this.client, this.upstream);
    }
    if (isBinary) return;
    const head = TYPE_AT_HEAD.exec(buf.subarray(0, 400).toString('latin1'));
    let type = head?.[1];
    let e: Obj | undefined;
    if (type === undefined || INTERESTING.has(type)) {
      try {
        e = obj(JSON.parse(buf.toString('utf8')));
      } catch {
        return;
      }
      if (e === undefined) return;
      type = typeof e.type === 'string' ? e.type : undefined;
    }
    // What arrived of a response, for the charge when the provider never reports its usage.
    if (type === 'response.output_text.delta' || type === 'response.text.delta') this.outTextDeltas++;
    else if (type === 'response.output_audio.delta' || type === 'response.audio.delta') {
      this.outAudioBytes += audioDeltaBytes(buf);
    }
    if (e === undefined || type === undefined || !INTERESTING.has(type)) return;
    try {
      this.onProviderEvent(e);
    } catch (err) {
      this.fail(err);
    }
  }

  private onProviderEvent(e: Obj): void {
    switch (e.type) {
      case 'session.created':
      case 'session.updated': {
        const s = obj(e.session);
        const audioIn = obj(obj(obj(s?.audio)?.input));
        const format = obj(audioIn?.format)?.type ?? s?.input_audio_format;
        if (typeof format === 'string') this.audioFormat = format;
        const tr = obj(audioIn?.transcription) ?? obj(s?.input_audio_transcription);
        this.transcriptionModel = typeof tr?.model === 'string' ? tr.model : undefined;
        const limit = outputLimit(
          s?.max_output_tokens ?? s?.max_response_output_tokens,
          this.deps.maxOutputTokens,
        );
        if (limit !== undefined) this.maxOutput = Math.max(limit, this.maxOutput);
        return;
      }
      case 'response.created':
        this.active = true;
        this.running++;
        if (this.requested > 0) this.requested--;
        this.snapshot = { text: this.textTokens, audio: this.audioMs };
        this.outTextDeltas = 0;
        this.outAudioBytes = 0;
        return;
      case 'response.done':
        this.responseDone(obj(e.response));
        return;
      case 'conversation.item.input_audio_transcription.completed':
        this.transcribed(e.usage);
        return;
      case 'error': {
        // A response.create the provider refused (one already runs) will not be created: it needs no bound.
        const code = obj(e.error)?.code;
        if (typeof code === 'string' && code.includes('active_response') && this.requested > 0)
          this.requested--;
        return;
      }
    }
  }

  private transcribed(usage: unknown): void {
    const model = this.transcriptionModel;
    const t = transcriptionUsage(usage);
    if (model === undefined || t === undefined) return;
    try {
      const c = this.deps.pricer.transcriptionCost(model, t);
      this.pendingMsat += c.msat;
      if (t.kind === 'tokens') addUsage(this.pendingUsage, t.usage);
    } catch (err) {
      this.deps.log.error({ err, session: this.start.id }, 'realtime: transcription could not be priced');
    }
  }

  private responseDone(response: Obj | undefined): void {
    const usage = responseUsage(response?.usage);
    this.running = Math.max(0, this.running - 1);
    this.active = this.running > 0;
    this.responses++;
    const snap = this.snapshot ?? { text: this.textTokens, audio: this.audioMs };
    this.snapshot = undefined;
    // What the response took as input is its context now; what was appended while it ran is still to come.
    this.textTokens = Math.max(0, this.textTokens - snap.text);
    this.audioMs = Math.max(0, this.audioMs - snap.audio);
    if (usage !== undefined) this.contextTokens = inputTotal(usage) + outputTotal(usage);
    const cost = usage === undefined ? undefined : this.deps.pricer.responseCost(usage);
    this.busy = true;
    this.settleAndRenew(usage, cost, false).then(
      () => {
        this.stepDone();
        this.doneWaiter?.();
        this.drainSafely();
      },
      (err) => {
        this.stepDone();
        this.doneWaiter?.();
        this.fail(err);
      },
    );
  }

  /**
   * Charges a response (and the transcriptions since) against the held reservations, tells the client, then
   * reserves the next bound unless the session is ending.
   */
  private async settleAndRenew(usage: Usage | undefined, cost: CostResult | undefined, estimated: boolean) {
    const total = (cost?.msat ?? 0) + this.pendingMsat;
    const u = usage ?? emptyUsage();
    addUsage(u, this.pendingUsage);
    const charged = await this.settle(total, u, estimated);
    this.pendingMsat = 0;
    this.pendingUsage = emptyUsage();
    if (cost !== undefined) {
      const availableMsat = await this.available();
      this.sendEvent({
        type: 'gateway.cost',
        event_id: `gw_${this.responses}`,
        msats: charged,
        sats: Math.ceil(charged / 1000),
        estimated,
        breakdown: {
          prompt_cost: cost.breakdown.promptMsat,
          completion_cost: cost.breakdown.completionMsat,
          fees: cost.breakdown.feesMsat,
          dimensions: cost.breakdown.dimensions,
        },
        transcription_msats: total - cost.msat,
        session_msats: this.chargedMsat,
        balance_msats: availableMsat,
      });
    }
    if (this.ending === undefined) {
      const need = this.need({ text: 0, audio: 0 });
      const want = this.need({ text: 0, audio: 0 }, this.deps.limits.audioAllowanceMs);
      await this.reserve(want, need);
    }
  }

  /** Splits `costMsat` over the held reservations (none above its own amount, the rest on the last). */
  private async settle(costMsat: number, usage: Usage, estimated: boolean): Promise<number> {
    const chunks = this.chunks;
    this.chunks = [];
    this.reservedMsat = 0;
    let left = costMsat;
    let charged = 0;
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i]!;
      const last = i === chunks.length - 1;
      const share = last ? left : Math.min(left, c.msat);
      if (share === 0 && !last) {
        await this.deps.ledger.release({ accountId: this.start.accountId, requestId: c.id });
        continue;
      }
      const r = await this.deps.ledger.settle({
        accountId: this.start.accountId,
        requestId: c.id,
        costMsat: share,
        promptTokens: last ? inputTotal(usage) : 0,
        completionTokens: last ? outputTotal(usage) : 0,
        model: this.deps.pricer.model,
        description: `realtime ${this.deps.pricer.model}: ${inputTotal(usage)} in / ${outputTotal(usage)} out tokens`,
        estimated,
      });
      if (r.ok) {
        charged += r.chargedMsat;
        left -= r.chargedMsat;
        if (r.overrunMsat > 0) {
          this.deps.log.warn({ session: this.start.id, overrun_msat: r.overrunMsat }, 'realtime: overrun');
        }
      }
    }
    this.chargedMsat += charged;
    return charged;
  }

  private async available(): Promise<number | null> {
    try {
      return (await this.deps.ledger.getKeyInfo(this.start.credential))?.availableMsat ?? null;
    } catch {
      return null;
    }
  }

  // ------------------------------------------------------------------------------------------------ lifecycle

  private touch(): void {
    if (this.idleTimer !== undefined) this.idleTimer.refresh();
    else {
      this.idleTimer = setTimeout(
        () => void this.end(CLOSE.idle, 'idle timeout'),
        this.deps.limits.idleTimeoutMs,
      );
      this.idleTimer.unref();
    }
  }

  /** A reader over the buffer bound: pause its source; close when it stays slow for slowReaderMs. */
  private slow(reader: Side, source: Side): void {
    if (this.watch !== undefined) return;
    source.pause();
    const since = Date.now();
    const bound = this.deps.limits.maxBufferedBytes;
    this.watch = setInterval(() => {
      if (reader.bufferedAmount <= bound / 2) {
        clearInterval(this.watch);
        this.watch = undefined;
        source.resume();
      } else if (Date.now() - since > this.deps.limits.slowReaderMs) {
        clearInterval(this.watch);
        this.watch = undefined;
        // A client too slow gets nothing more but the close (after its backlog); the provider is read on, so
        // that a response in flight still reaches its response.done and is settled from it.
        if (reader === this.client) this.relayToClient = false;
        source.resume();
        void this.end(CLOSE.slowReader, reader === this.client ? 'client too slow' : 'provider too slow');
      }
    }, 20);
    this.watch.unref();
  }

  private fail(err: unknown): void {
    const ge = toGatewayError(err);
    this.deps.log.error({ err: ge.cause ?? ge, session: this.start.id }, 'realtime: money step failed');
    this.sendError(ge.code, ge.message);
    void this.end(CLOSE.internalError, ge.code);
  }

  private end(code: number, reason: string): Promise<void> {
    this.ending ??= this.finish(code, reason);
    return this.ending;
  }

  private async finish(code: number, reason: string): Promise<void> {
    this.endCode = code;
    clearTimeout(this.maxTimer);
    clearTimeout(this.idleTimer);
    if (this.watch !== undefined) clearInterval(this.watch);
    this.inbox = [];
    this.inboxBytes = 0;
    try {
      // A money step in flight (a settlement, a reservation) finishes first.
      await this.untilIdle();
      if (this.active && this.upstreamOpen) await this.waitForDone();
      if (this.active) {
        // The provider is gone mid-response: what arrived is charged (estimated).
        this.active = false;
        const u = this.estimate();
        await this.settleAndRenew(u, this.deps.pricer.responseCost(u), true);
      } else if (this.pendingMsat > 0) {
        await this.settleAndRenew(undefined, undefined, false);
      }
      for (const c of this.chunks) {
        await this.deps.ledger.release({ accountId: this.start.accountId, requestId: c.id });
      }
      this.chunks = [];
      this.reservedMsat = 0;
    } catch (err) {
      // The store is unreachable: the reservations stay and the orphan/lease release returns them.
      this.deps.log.error({ err, session: this.start.id }, 'realtime: settling the session failed');
    } finally {
      if (this.upstreamOpen) this.upstream.close(1000);
      if (this.clientOpen) this.client.close(code, reason.slice(0, 120));
      this.onEnd({
        id: this.start.id,
        chargedMsat: this.chargedMsat,
        responses: this.responses,
        seconds: (Date.now() - this.startedAt) / 1000,
        closeCode: this.endCode,
      });
    }
  }

  private stepDone(): void {
    this.busy = false;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const cb of w) cb();
  }

  private untilIdle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private waitForDone(): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.doneWaiter = undefined;
        resolve();
      }, this.deps.limits.drainMs);
      this.doneWaiter = () => {
        clearTimeout(t);
        this.doneWaiter = undefined;
        resolve();
      };
    }).then(() => this.untilIdle());
  }

  /** A response the provider never finished: its input (the context and what was appended) and the output seen. */
  private estimate(): Usage {
    const u = emptyUsage();
    // Event bytes bound the tokens; as an estimate, 4 characters a token.
    u.input = this.contextTokens + Math.ceil((this.snapshot?.text ?? this.textTokens) / 4);
    const audioMs = this.snapshot?.audio ?? this.audioMs;
    u.inputAudio = Math.ceil((audioMs * this.deps.limits.audioTokensPerSecond) / 1000);
    u.output = this.outTextDeltas;
    // Output audio: 24 kHz 16-bit mono (48 bytes per ms).
    u.outputAudio = Math.ceil(((this.outAudioBytes / 48) * this.deps.limits.audioTokensPerSecond) / 1000);
    return u;
  }

  private sendEvent(e: Obj): void {
    if (this.clientOpen && this.relayToClient && this.client.open) this.client.send(JSON.stringify(e), false);
  }

  private sendError(code: string, message: string, details?: Obj): void {
    this.sendEvent({
      type: 'error',
      event_id: `gw_err_${Date.now()}`,
      error: { type: 'gateway_error', code, message, ...(details !== undefined ? { details } : {}) },
    });
  }
}

/** Provider events the session reads whole (every other is relayed without parsing). */
const INTERESTING = new Set([
  'session.created',
  'session.updated',
  'response.created',
  'response.done',
  'conversation.item.input_audio_transcription.completed',
  'error',
]);

/** Decoded bytes of an audio delta's base64 `delta` (read without parsing the frame). */
function audioDeltaBytes(buf: Buffer): number {
  const text = buf.toString('latin1');
  const i = text.indexOf('"delta":"');
  if (i === -1) return 0;
  const end = text.indexOf('"', i + 9);
  return end === -1 ? 0 : Math.floor(((end - i - 9) * 3) / 4);
}

function addUsage(to: Usage, u: Usage): void {
  to.input += u.input;
  to.cacheRead += u.cacheRead;
  to.inputAudio += u.inputAudio;
  to.cacheReadAudio += u.cacheReadAudio;
  to.inputImage += u.inputImage;
  to.output += u.output;
  to.outputAudio += u.outputAudio;
}
