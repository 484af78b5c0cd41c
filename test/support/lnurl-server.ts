import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Wallet } from '@cashu/cashu-ts';

/**
 * A minimal LNURL-pay server (LUD-06/16) on loopback, the far end of a refund to a Lightning address: `alice`
 * is a payRequest whose callback answers with an invoice of the recipient's wallet (a second dev mint's mint
 * quote, paid only when a melt pays it on the fake Lightning network); `k<N>` (k1, k2 …) are payRequests of their
 * own, each invoice recorded with its name (`issued`); `withdraw` is no payRequest; any other name is unknown (404).
 */
export class LnurlServer {
  server!: Server;
  port = 0;
  /** Invoices the callback handed out, in order. */
  readonly invoices: string[] = [];
  /** Processes that may call (gateways' pids): each callback records which of them asked, while it asks. */
  callers: readonly number[] = [];
  /** Of each callback request in order, the pid among `callers` that sent it (undefined: none of them). */
  readonly callbackPids: Array<number | undefined> = [];
  requests = 0;
  /** Invoices handed out for the `k<N>` names: which name, the recipient mint's quote, the amount. */
  readonly issued: Array<{ name: string; invoice: string; quote: string; sats: number }> = [];
  constructor(private readonly recipient: Wallet) {}

  /** `port` 0 (default): a free one; `npm run lnurl:dev` (scripts/dev-lnurl.ts) names one. */
  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      this.requests++;
      const url = new URL(req.url ?? '/', `http://127.0.0.1:${this.port}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === '/.well-known/lnurlp/alice') {
        send(200, {
          tag: 'payRequest',
          callback: `http://127.0.0.1:${this.port}/cb/alice`,
          minSendable: 1000,
          maxSendable: 100_000_000,
          metadata: JSON.stringify([
            ['text/plain', 'alice'],
            ['text/identifier', 'alice@test'],
          ]),
        });
      } else if (url.pathname === '/.well-known/lnurlp/withdraw') {
        send(200, { tag: 'withdrawRequest', callback: `http://127.0.0.1:${this.port}/w`, k1: 'x' });
      } else if (/^\/\.well-known\/lnurlp\/k\d+$/.test(url.pathname)) {
        // `k<N>`: one payRequest per name (a harness gives each key its own address, to count what each was paid).
        const name = url.pathname.slice('/.well-known/lnurlp/'.length);
        send(200, {
          tag: 'payRequest',
          callback: `http://127.0.0.1:${this.port}/cb/${name}`,
          minSendable: 1000,
          maxSendable: 100_000_000,
          metadata: JSON.stringify([['text/plain', name]]),
        });
      } else if (/^\/cb\/k\d+$/.test(url.pathname)) {
        const name = url.pathname.slice('/cb/'.length);
        const sats = Math.floor(Number(url.searchParams.get('amount')) / 1000);
        this.recipient.createMintQuoteBolt11(sats).then(
          (q) => {
            this.invoices.push(q.request);
            this.issued.push({ name, invoice: q.request, quote: q.quote, sats });
            send(200, { pr: q.request, routes: [] });
          },
          () => send(200, { status: 'ERROR', reason: 'no invoice' }),
        );
      } else if (url.pathname === '/cb/alice') {
        const port = req.socket.remotePort;
        if (this.callers.length > 0 && port !== undefined) {
          this.callbackPids.push(pidOfClientPort(port, this.callers));
        }
        const msat = Number(url.searchParams.get('amount'));
        this.recipient.createMintQuoteBolt11(msat / 1000).then(
          (q) => {
            this.invoices.push(q.request);
            send(200, { pr: q.request, routes: [] });
          },
          () => send(200, { status: 'ERROR', reason: 'no invoice' }),
        );
      } else send(404, { status: 'ERROR', reason: 'unknown user' });
    });
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  address(name: string): string {
    return `${name}@127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/**
 * Which of `pids` holds the loopback TCP connection whose local (client) port is `port` (Linux: the socket's
 * inode from /proc/net/tcp{,6}, then the processes' open descriptors); undefined when none does. Call it while
 * the connection is open (e.g. while its request is being answered).
 */
export function pidOfClientPort(port: number, pids: readonly number[]): number | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[1]!.endsWith(`:${hexPort}`)) inodes.add(f[9]!);
    }
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}
