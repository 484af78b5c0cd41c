import { AUTH, createLocalKey, type RequestContext } from '../core/context.js';
import { GatewayError } from '../core/errors.js';
import { fileIdsOf } from '../core/metering/request-bound.js';
import { type ObjectOwners, ownedBy } from '../core/objects/types.js';
import type { Plugin, PluginFactory, PluginNeeds } from '../core/plugin.js';
import { noOptions, STORED_RESPONSE } from './paid-state.js';

/**
 * The owner stage: records which key created a Responses API object, so `GET/DELETE /v1/responses/{id}` and
 * `…/input_items` answer only for that key (core/routes/responses.ts; the provider key is shared, so the
 * provider would show any caller any id). The response id is the first `"id":"resp_…"` of the answer: the top
 * level `id` of the JSON body, or the `response.id` of a stream's first event (`response.created`). Only the
 * first 4 KiB of a 2xx answer of `POST /v1/responses` are looked at; chunks pass through unchanged. It sits
 * right after the relay so it sees the provider's bytes. Fails closed: an id it could not record answers 404 to
 * every key. A `POST /v1/responses` that continues a stored response (`previous_response_id`) of another key is
 * refused with 404 before it reaches the provider (the provider would read that key's conversation).
 *
 * The same holds for files: a paid call naming a `file_id` (or `file_ids`) anywhere in its body — a chat `file`
 * part, a Responses `input_file` / `input_image`, an Anthropic `file` source, a code interpreter container — that
 * another key uploaded (POST /v1/files records the owner) is refused with 404 `not_found` before the provider reads
 * it. An id the gateway never saw uploaded is refused too (it may be another tenant's file at the shared provider
 * key). Bodies without the text `file_id` are not walked.
 */

const HEAD_BYTES = 4096;
/** At most this many file ids are checked in one body (more: refused, a body cannot name that many honestly). */
const MAX_FILE_IDS = 64;

/** Refuses (404) a call naming a file the calling key does not own. */
async function ownFiles(ctx: RequestContext, objects: ObjectOwners): Promise<void> {
  if (!ctx.rawBody.includes('file_id')) return;
  const keyId = ctx.local(AUTH)?.keyId;
  if (keyId === undefined) return;
  const ids = [...new Set(fileIdsOf(ctx.body))];
  if (ids.length > MAX_FILE_IDS) {
    throw new GatewayError('invalid_request', { message: `At most ${MAX_FILE_IDS} file ids in one call` });
  }
  for (const id of ids) {
    if ((await ownedBy(objects, id, 'file', keyId)) === null) {
      throw new GatewayError('not_found', { message: `No such file: ${id}` });
    }
  }
}
const RESPONSE_ID = /"id"\s*:\s*"(resp_[A-Za-z0-9_-]{1,200})"/;

interface Seen {
  head: string;
  id: string | undefined;
}
const SEEN = createLocalKey<Seen>('owner-seen');

/** The services owner uses: plugins/index.ts hands it these alone (a required one missing stops the start). */
export const ownerNeeds = {
  optional: ['objects'],
} as const satisfies PluginNeeds;

export const owner: PluginFactory<typeof ownerNeeds> = (options, services): Plugin => {
  noOptions('owner', options);
  const objects = services.objects;
  return {
    name: 'owner',
    async onRequest(ctx) {
      if (objects === undefined || ctx.method !== 'POST') return;
      await ownFiles(ctx, objects);
      if (ctx.path !== '/v1/responses') return;
      const previous = (ctx.body as { previous_response_id?: unknown } | null)?.previous_response_id;
      const keyId = ctx.local(AUTH)?.keyId;
      if (typeof previous !== 'string' || keyId === undefined) return;
      if ((await ownedBy(objects, previous, 'response', keyId)) === null) {
        throw new GatewayError('not_found', { message: `No such response: ${previous}` });
      }
    },
    onResponseHead(ctx, head) {
      if (objects === undefined || ctx.method !== 'POST' || ctx.path !== '/v1/responses') return;
      if (head.status < 200 || head.status >= 300) return;
      ctx.setLocal(SEEN, { head: '', id: undefined });
    },
    onResponseChunk(ctx, chunk) {
      const seen = ctx.local(SEEN);
      if (seen === undefined || seen.id !== undefined || seen.head.length >= HEAD_BYTES) return undefined;
      seen.head += Buffer.from(
        chunk.buffer,
        chunk.byteOffset,
        Math.min(chunk.byteLength, HEAD_BYTES),
      ).toString('utf8');
      seen.id = RESPONSE_ID.exec(seen.head)?.[1];
      return undefined;
    },
    async onResponseEnd(ctx) {
      const id = ctx.local(SEEN)?.id;
      const auth = ctx.local(AUTH);
      if (id === undefined || auth === undefined || objects === undefined) return;
      await objects.record({
        id,
        kind: 'response',
        accountId: auth.accountId,
        keyId: auth.keyId,
        createdAtMs: Date.now(),
        meta: null,
      });
      // The settle stage (after this one) writes the tokens it charged into the record.
      ctx.setLocal(STORED_RESPONSE, id);
    },
  };
};
