import type { IncomingMessage, ServerResponse } from 'node:http';
import { Busboy } from '@fastify/busboy';

/**
 * The mock provider's Files and Batch APIs (used by bench/upstream/mock-upstream.ts):
 *
 * - POST /v1/files (multipart: purpose, file) → a file object; GET /v1/files, GET/DELETE /v1/files/{id},
 *   GET /v1/files/{id}/content.
 * - POST /v1/batches {input_file_id, endpoint, completion_window} → `in_progress` for `delayMs`, then the
 *   configured outcome: `completed` (every line answered), or `failed` / `expired` with the first `answered`
 *   lines answered (partial output) and the rest in the error file. POST /v1/batches/{id}/cancel → `cancelled`
 *   with the first `answered` lines answered. GET /v1/batches, GET /v1/batches/{id}.
 *
 * An answered line's usage is the mock's deterministic count for its body (prompt = ceil(chars / 4),
 * completion = min(chunks, max_tokens)), or `usage` when set.
 *
 * Lists are newest first and page like the provider's (`limit`: files default and at most 10,000, batches default
 * 20 and at most 100; `after` = the last id of the previous page; `has_more`). `create` makes POST /v1/batches misbehave: refuse it (400 JSON), fail it
 * (500), drop the connection without making the batch, or make the batch and then drop the connection, answer 502 or
 * never answer (the gateway cannot know whether it was made).
 */

export interface MockBatchBehaviour {
  /** How long a batch stays `in_progress`, ms. */
  delayMs: number;
  outcome: 'completed' | 'failed' | 'expired';
  /** Lines answered by a failed, expired or cancelled batch (partial output); default 0. */
  answered: number;
  /** Every answered line reports this usage instead of the deterministic count. */
  usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  /** How POST /v1/batches answers; default `accept`. */
  create?:
    | 'accept'
    | 'refuse'
    | 'fail'
    | 'drop'
    | 'accept-then-drop'
    | 'accept-then-hang'
    | 'accept-then-502';
}

export function defaultBatchBehaviour(): MockBatchBehaviour {
  return { delayMs: 0, outcome: 'completed', answered: 0, usage: undefined };
}

interface MockFile {
  id: string;
  filename: string;
  purpose: string;
  data: Buffer;
  created_at: number;
}

interface MockBatch {
  id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  createdMs: number;
  cancelled: boolean;
  /** Set once the batch ended (its files are made then). */
  final?: {
    status: string;
    output_file_id: string | null;
    error_file_id: string | null;
    completed: number;
    failed: number;
  };
}

export type LineUsage = (body: Record<string, unknown>) => {
  prompt_tokens: number;
  completion_tokens: number;
};

function send(res: ServerResponse, status: number, value: unknown): void {
  const payload = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

/** One page of a newest-first list, as the provider pages it. */
function page<T extends { id: string }>(
  all: T[],
  query: URLSearchParams,
  defaultLimit: number,
  maxLimit: number,
) {
  const limit = Math.min(maxLimit, Math.max(1, Number(query.get('limit') ?? defaultLimit) || defaultLimit));
  const after = query.get('after');
  const start = after === null ? 0 : all.findIndex((o) => o.id === after) + 1;
  const data = start === 0 && after !== null ? [] : all.slice(start, start + limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + limit < all.length,
  };
}

function notFound(res: ServerResponse, what: string): void {
  send(res, 404, { error: { message: `No such ${what}`, type: 'invalid_request_error', code: null } });
}

export function createMockBatches(behaviour: () => MockBatchBehaviour, lineUsage: LineUsage) {
  const files = new Map<string, MockFile>();
  const batches = new Map<string, MockBatch>();
  let seq = 0;

  function fileView(f: MockFile) {
    return {
      id: f.id,
      object: 'file',
      bytes: f.data.length,
      created_at: f.created_at,
      filename: f.filename,
      purpose: f.purpose,
    };
  }

  function addFile(purpose: string, filename: string, data: Buffer): MockFile {
    const f = { id: `file-mock${++seq}`, filename, purpose, data, created_at: Math.floor(Date.now() / 1000) };
    files.set(f.id, f);
    return f;
  }

  /** Ends the batch: answers its first `answered` lines, the rest go to the error file. */
  function finish(batch: MockBatch, status: string, answered: number): void {
    const input = files.get(batch.input_file_id)?.data.toString('utf8') ?? '';
    const lines = input.split('\n').filter((l) => l.trim() !== '');
    const out: string[] = [];
    const err: string[] = [];
    const b = behaviour();
    lines.forEach((raw, i) => {
      const line = JSON.parse(raw) as { custom_id: string; body: Record<string, unknown> };
      if (i < answered) {
        const u = b.usage ?? lineUsage(line.body);
        out.push(
          JSON.stringify({
            id: `batch_req_${i}`,
            custom_id: line.custom_id,
            response: {
              status_code: 200,
              request_id: `req_${i}`,
              body: {
                id: `chatcmpl-batch-${i}`,
                object: 'chat.completion',
                model: line.body.model,
                choices: [
                  { index: 0, message: { role: 'assistant', content: 'tok' }, finish_reason: 'stop' },
                ],
                usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens },
              },
            },
            error: null,
          }),
        );
      } else {
        const code =
          status === 'expired'
            ? 'batch_expired'
            : status === 'cancelled'
              ? 'batch_cancelled'
              : 'server_error';
        err.push(
          JSON.stringify({
            id: `batch_req_${i}`,
            custom_id: line.custom_id,
            response: null,
            error: { code, message: code },
          }),
        );
      }
    });
    const output =
      out.length > 0 ? addFile('batch_output', 'output.jsonl', Buffer.from(`${out.join('\n')}\n`)) : null;
    const errors =
      err.length > 0 ? addFile('batch_output', 'errors.jsonl', Buffer.from(`${err.join('\n')}\n`)) : null;
    batch.final = {
      status,
      output_file_id: output?.id ?? null,
      error_file_id: errors?.id ?? null,
      completed: out.length,
      failed: err.length,
    };
  }

  function view(batch: MockBatch) {
    const b = behaviour();
    if (batch.final === undefined && !batch.cancelled && Date.now() >= batch.createdMs + b.delayMs) {
      const total = (files.get(batch.input_file_id)?.data.toString('utf8') ?? '')
        .split('\n')
        .filter((l) => l.trim() !== '').length;
      finish(batch, b.outcome, b.outcome === 'completed' ? total : b.answered);
    }
    const f = batch.final;
    return {
      id: batch.id,
      object: 'batch',
      endpoint: batch.endpoint,
      input_file_id: batch.input_file_id,
      completion_window: batch.completion_window,
      status: f?.status ?? 'in_progress',
      output_file_id: f?.output_file_id ?? null,
      error_file_id: f?.error_file_id ?? null,
      created_at: Math.floor(batch.createdMs / 1000),
      request_counts: {
        total: (f?.completed ?? 0) + (f?.failed ?? 0),
        completed: f?.completed ?? 0,
        failed: f?.failed ?? 0,
      },
    };
  }

  function upload(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const fields: Record<string, string> = {};
    let file: { name: string; data: Buffer } | undefined;
    const parser = Busboy({ headers: { 'content-type': req.headers['content-type'] ?? '' } });
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (_field, stream, filename) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        file = { name: filename, data: Buffer.concat(chunks) };
      });
    });
    parser.on('error', () =>
      send(res, 400, { error: { message: 'bad multipart', type: 'invalid_request_error' } }),
    );
    parser.on('finish', () => {
      if (file === undefined || fields.purpose === undefined) {
        send(res, 400, {
          error: { message: 'purpose and file are required', type: 'invalid_request_error' },
        });
        return;
      }
      send(res, 200, fileView(addFile(fields.purpose, file.name, file.data)));
    });
    parser.end(raw);
  }

  /** Answers a Files or Batches request; false when the path is neither. */
  function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Record<string, unknown>,
    raw: Buffer,
  ): boolean {
    const m = req.method;
    const q = (req.url ?? '').indexOf('?');
    const query = new URLSearchParams(q === -1 ? '' : (req.url ?? '').slice(q + 1));
    const fileMatch = /^\/v1\/files\/([^/]+)(\/content)?$/.exec(path);
    const batchMatch = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    if (path === '/v1/files' && m === 'POST') upload(req, res, raw);
    else if (path === '/v1/files' && m === 'GET')
      send(res, 200, page([...files.values()].reverse().map(fileView), query, 10_000, 10_000));
    else if (fileMatch) {
      const r = fileMatch;
      const f = files.get(decodeURIComponent(r[1]!));
      if (f === undefined) notFound(res, 'file');
      else if (r[2] !== undefined && m === 'GET') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': f.data.length });
        res.end(f.data);
      } else if (m === 'GET') send(res, 200, fileView(f));
      else if (m === 'DELETE') {
        files.delete(f.id);
        send(res, 200, { id: f.id, object: 'file', deleted: true });
      } else notFound(res, 'route');
    } else if (path === '/v1/batches' && m === 'POST') {
      if (typeof body.input_file_id !== 'string' || !files.has(body.input_file_id)) {
        notFound(res, 'file');
        return true;
      }
      const create = behaviour().create ?? 'accept';
      if (create === 'refuse') {
        send(res, 400, { error: { message: 'Batch refused', type: 'invalid_request_error', code: null } });
        return true;
      }
      if (create === 'fail') {
        send(res, 500, { error: { message: 'Internal error', type: 'server_error', code: null } });
        return true;
      }
      if (create === 'drop') {
        req.socket.destroy();
        return true;
      }
      const batch: MockBatch = {
        id: `batch_mock${++seq}`,
        endpoint: String(body.endpoint),
        input_file_id: body.input_file_id,
        completion_window: String(body.completion_window ?? '24h'),
        createdMs: Date.now(),
        cancelled: false,
      };
      batches.set(batch.id, batch);
      if (create === 'accept-then-drop') req.socket.destroy();
      // A proxy in front of the provider that lost the answer: 502, the batch made all the same.
      else if (create === 'accept-then-502')
        send(res, 502, { error: { message: 'Bad gateway', type: 'server_error' } });
      else if (create === 'accept') send(res, 200, { ...view(batch), status: 'validating' });
      // accept-then-hang: never answers.
    } else if (path === '/v1/batches' && m === 'GET')
      send(res, 200, page([...batches.values()].reverse().map(view), query, 20, 100));
    else if (batchMatch) {
      const r = batchMatch;
      const batch = batches.get(decodeURIComponent(r[1]!));
      if (batch === undefined) notFound(res, 'batch');
      else if (r[2] !== undefined && m === 'POST') {
        if (batch.final === undefined) {
          batch.cancelled = true;
          finish(batch, 'cancelled', behaviour().answered);
        }
        send(res, 200, view(batch));
      } else if (m === 'GET') send(res, 200, view(batch));
      else notFound(res, 'route');
    } else return false;
    return true;
  }

  return { handle };
}
