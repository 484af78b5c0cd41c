import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getDecodedToken, getEncodedToken } from '@cashu/cashu-ts';

/**
 * A proxy in front of a mint that can queue requests: while `hold(true)` is set, a request whose method and path
 * match `path` (e.g. `POST /v1/melt/bolt11`) is read in full and kept; `hold(false)` forwards every queued one to
 * the mint — even when its client has given up meanwhile (a timeout), as a queue in front of a mint does. The
 * answer goes to the client if it is still there. Everything else is forwarded at once.
 *
 * With `{ answers: true }` the request goes to the mint at once (the mint performs it) and its ANSWER is kept
 * instead: a reply lost on the way back, or a caller paused between the mint's work and its own next step.
 */
export interface MintGate {
  url: string;
  hold(on: boolean): void;
  /** Requests queued now. */
  waiting(): number;
  /** Queued requests forwarded and answered by the mint so far. */
  forwarded(): number;
  close(): Promise<void>;
}

export async function mintGate(
  target: string,
  path: string,
  opts: { answers?: boolean } = {},
): Promise<MintGate> {
  const up = new URL(target);
  let held = false;
  let forwarded = 0;
  const queue: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = (queued: boolean) => {
        const out = request(
          { host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers },
          (r) => {
            const parts: Buffer[] = [];
            r.on('data', (c: Buffer) => parts.push(c));
            r.on('end', () => {
              if (queued) forwarded++;
              const answer = () => {
                if (res.destroyed || res.writableEnded) return;
                res.writeHead(r.statusCode ?? 502, r.headers);
                res.end(Buffer.concat(parts));
              };
              if (opts.answers && held && req.url === path) queue.push(answer);
              else answer();
            });
          },
        );
        out.on('error', () => res.destroy());
        out.end(body);
      };
      if (held && req.url === path && !opts.answers) queue.push(() => forward(true));
      else forward(false);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold(on) {
      held = on;
      if (!on) for (const f of queue.splice(0)) f();
    },
    waiting: () => queue.length,
    forwarded: () => forwarded,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `token` (made by the mint at `from`) naming the mint `to` instead: the same proofs, another address. */
export async function renamedToken(token: string, from: string, to: string): Promise<string> {
  const { keysets } = (await (await fetch(`${from}/v1/keysets`)).json()) as { keysets: { id: string }[] };
  const decoded = getDecodedToken(
    token,
    keysets.map((k) => k.id),
  );
  return getEncodedToken({ ...decoded, mint: to });
}
