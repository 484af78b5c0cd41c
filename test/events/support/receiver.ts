import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver for tests: records every request; answers per path from a plan of statuses. A 3xx
 * answer carries `Location: <path>/moved` (a follower would be seen there); status 0 never answers.
 */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export class Receiver {
  readonly got: Received[] = [];
  /** path → statuses to answer in turn (the last one repeats); default 200. */
  readonly plan = new Map<string, number[]>();
  private server!: Server;
  private readonly hanging: ServerResponse[] = [];
  url = '';
  async start() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const path = req.url ?? '/';
        this.got.push({ path, headers: req.headers, body });
        const plan = this.plan.get(path) ?? [200];
        const status = plan.length > 1 ? plan.shift()! : plan[0]!;
        if (status === 0) {
          this.hanging.push(res);
          return;
        }
        res.statusCode = status;
        if (status >= 300 && status < 400) res.setHeader('location', `${path}/moved`);
        res.end();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  on(path: string) {
    return this.got.filter((g) => g.path === path);
  }
  close() {
    for (const res of this.hanging.splice(0)) res.destroy();
    this.server.close();
  }
}
