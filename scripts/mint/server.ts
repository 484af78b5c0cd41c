import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type MintCore, MintError } from './mint-core.js';

/**
 * HTTP transport of the dev mint: the NUT-00..09/12 endpoints under /v1, JSON in and out, protocol errors as
 * HTTP 400 `{ "detail", "code" }` (NUT-00). Bodies are bounded; binds loopback only.
 */

const MAX_BODY = 1024 * 1024;

type Handler = (core: MintCore, body: Record<string, unknown>, param: string | undefined) => unknown;

const ROUTES: Array<{ method: 'GET' | 'POST'; path: RegExp; handler: Handler }> = [
  { method: 'GET', path: /^\/v1\/info$/, handler: (c) => c.info() },
  { method: 'GET', path: /^\/v1\/keysets$/, handler: (c) => c.keysetsInfo() },
  { method: 'GET', path: /^\/v1\/keys$/, handler: (c) => c.keys() },
  { method: 'GET', path: /^\/v1\/keys\/([0-9a-fA-F]+)$/, handler: (c, _b, id) => c.keys(id) },
  { method: 'POST', path: /^\/v1\/swap$/, handler: (c, b) => c.swap(b) },
  { method: 'POST', path: /^\/v1\/mint\/quote\/bolt11$/, handler: (c, b) => c.createMintQuote(b) },
  {
    method: 'GET',
    path: /^\/v1\/mint\/quote\/bolt11\/([0-9a-f]+)$/,
    handler: (c, _b, id) => c.mintQuoteView(id ?? ''),
  },
  // DEV ONLY (not NUT): the fake Lightning backend receives the payment of a mint quote's invoice.
  {
    method: 'POST',
    path: /^\/dev\/pay\/mint-quote\/([0-9a-f]+)$/,
    handler: (c, _b, id) => c.payMintQuote(id ?? ''),
  },
  // DEV ONLY: the same, naming the quote by its invoice ({"invoice": "lnbcrt…"}).
  { method: 'POST', path: /^\/dev\/pay$/, handler: (c, b) => c.payInvoice(b.invoice) },
  { method: 'POST', path: /^\/v1\/mint\/bolt11$/, handler: (c, b) => c.mint(b) },
  { method: 'POST', path: /^\/v1\/melt\/quote\/bolt11$/, handler: (c, b) => c.createMeltQuote(b) },
  {
    method: 'GET',
    path: /^\/v1\/melt\/quote\/bolt11\/([0-9a-f]+)$/,
    handler: (c, _b, id) => c.meltQuoteView(id ?? ''),
  },
  { method: 'POST', path: /^\/v1\/melt\/bolt11$/, handler: (c, b) => c.melt(b) },
  { method: 'POST', path: /^\/v1\/checkstate$/, handler: (c, b) => c.checkState(b) },
  { method: 'POST', path: /^\/v1\/restore$/, handler: (c, b) => c.restore(b) },
];

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new MintError(11015, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    throw new MintError(10001, 'request body is not JSON');
  }
}

export interface MintServerControls {
  /** When set, every request is answered with this HTTP status (simulates a failing mint). */
  outageStatus: number | null;
  /**
   * When set, a request whose path matches is handled (its state change applies) but never answered: the
   * connection stays open until the server closes, as a mint that holds a melt while its Lightning payment is
   * in flight, or whose answer is lost.
   */
  stall?: RegExp | null;
}

export function createMintServer(
  core: MintCore,
  controls: MintServerControls,
  opts: { nut09?: boolean } = {},
): Server {
  // A mint without NUT-09 has no restore route.
  const routes = opts.nut09 === false ? ROUTES.filter((r) => !r.path.test('/v1/restore')) : ROUTES;
  // Idle keep-alive connections are kept 75 s, as nginx in front of a real mint keeps them: with node's 5 s a
  // client (undici: 4 s) can reuse a connection the mint is closing at that moment and get `fetch failed`.
  return createServer({ keepAliveTimeout: 75_000, headersTimeout: 80_000 }, (req, res) => {
    void (async () => {
      try {
        if (controls.outageStatus !== null) {
          send(res, controls.outageStatus, { detail: 'simulated outage' });
          return;
        }
        const url = new URL(req.url ?? '/', 'http://localhost');
        for (const r of routes) {
          if (r.method !== req.method) continue;
          const m = r.path.exec(url.pathname);
          if (!m) continue;
          const body = req.method === 'POST' ? await readBody(req) : {};
          const answer = r.handler(core, body, m[1]);
          if (controls.stall?.test(url.pathname)) return;
          send(res, 200, answer);
          return;
        }
        send(res, 404, { detail: 'not found' });
      } catch (err) {
        if (err instanceof MintError) send(res, 400, { detail: err.message, code: err.code });
        else send(res, 500, { detail: 'internal error' });
      }
    })();
  });
}
