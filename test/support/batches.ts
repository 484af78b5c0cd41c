import { type OpenAI, toFile } from 'openai';
import { expect } from 'vitest';

/** A batch input file of `lines` chat requests (`x` × 40 each, `maxTokens` max tokens, to `model`). */
export function batchLines(lines: number, maxTokens = 20, model = 'mock-gpt'): string {
  let out = '';
  for (let i = 0; i < lines; i++) {
    out += `${JSON.stringify({
      custom_id: `req-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model, max_tokens: maxTokens, messages: [{ role: 'user', content: 'x'.repeat(40) }] },
    })}\n`;
  }
  return out;
}

/** Uploads `jsonl` as a batch input file. */
export async function uploadBatchInput(client: OpenAI, jsonl: string, name = 'input.jsonl') {
  return client.files.create({ file: await toFile(Buffer.from(jsonl), name), purpose: 'batch' });
}

/** The batch every test creates: chat completions over `fileId`, a 24 h window. */
export function createBatch(
  client: OpenAI,
  fileId: string,
  endpoint: '/v1/chat/completions' | '/v1/responses' = '/v1/chat/completions',
) {
  return client.batches.create({
    input_file_id: fileId,
    endpoint,
    completion_window: '24h',
  });
}

/** POSTs `form` to /v1/files at `baseURL` as `apiKey` and expects a 400 naming `message`. */
export async function expectUploadRefused(baseURL: string, apiKey: string, form: FormData, message: string) {
  const refused = await fetch(`${baseURL}/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
    body: form,
  });
  expect(refused.status).toBe(400);
  expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(message);
}
