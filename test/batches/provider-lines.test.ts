import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerLines } from '../../core/batches/provider-call.js';
import { UpstreamClient } from '../../core/upstream/upstream-client.js';

/**
 * The watcher reads a batch's output file line by line as it arrives (issue 34, item 7: a 200 MB output must not be
 * held whole): every line reaches the pricer once, split at any chunk boundary, and no more than one line is held —
 * a line longer than the bound fails the read instead of growing without end.
 */
describe('providerLines', () => {
  let server: Server;
  let client: UpstreamClient;
  /** 20,000 lines of 1 KiB (about 20 MiB), written in 7,919-byte chunks that cut lines anywhere. */
  const LINES = 20_000;
  const line = (i: number) => `{"i":${i},"pad":"${'x'.repeat(1_000)}"}`;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/v1/files/big/content') {
        res.writeHead(200, { 'content-type': 'application/jsonl' });
        let i = 0;
        let pending = '';
        const pump = () => {
          while (i < LINES) {
            pending += `${line(i++)}\n`;
            while (pending.length >= 7_919) {
              const ok = res.write(pending.slice(0, 7_919));
              pending = pending.slice(7_919);
              if (!ok) return void res.once('drain', pump);
            }
          }
          res.end(pending); // the last line's newline included
        };
        pump();
      } else if (req.url === '/v1/files/long/content') {
        res.writeHead(200);
        res.end(`{"a":1}\n${'y'.repeat(5_000)}`); // a last line with no newline, longer than the test bound
      } else if (req.url === '/v1/files/gone/content') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"No such file"}}');
      } else {
        res.writeHead(200);
        res.end('{"a":1}\n{"b":2}'); // no final newline: the last line still counts
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    client = new UpstreamClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      connections: 2,
      timeoutMs: 10_000,
    });
  });
  afterAll(async () => {
    await client.close();
    await new Promise((r) => server.close(r));
  });

  it('hands every line over once, in order, whatever the chunk boundaries', async () => {
    let n = 0;
    let inOrder = true;
    const status = await providerLines(client, '/v1/files/big/content', (l) => {
      if (l !== line(n)) inOrder = false;
      n++;
    });
    expect(status).toBe(200);
    expect(n).toBe(LINES);
    expect(inOrder).toBe(true);
  });

  it('a last line without a newline counts', async () => {
    const seen: string[] = [];
    expect(await providerLines(client, '/v1/files/short/content', (l) => seen.push(l))).toBe(200);
    expect(seen).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('holds at most one line: a longer one fails the read', async () => {
    const seen: string[] = [];
    await expect(providerLines(client, '/v1/files/long/content', (l) => seen.push(l), 4_096)).rejects.toThrow(
      'A provider file line is too long',
    );
    expect(seen).toEqual(['{"a":1}']);
  });

  it('a non-200 answer is its status, with no lines', async () => {
    const seen: string[] = [];
    expect(await providerLines(client, '/v1/files/gone/content', (l) => seen.push(l))).toBe(404);
    expect(seen).toEqual([]);
  });
});
