import { connect } from 'node:net';

/**
 * Polls each URL until it answers (`http(s)://`: a 2xx; `ws(s)://` and `tcp://`: a TCP connection accepted), for
 * the walkthroughs' `npm run wait-ready` and `npm run demo`. Returns the URLs that did not answer within
 * `timeoutMs`, each with the last thing it said (empty when all answered).
 */
export async function waitReady(
  urls: readonly string[],
  opts: { timeoutMs: number; pollMs?: number },
): Promise<Array<{ url: string; last: string }>> {
  const deadline = Date.now() + opts.timeoutMs;
  const results = await Promise.all(
    urls.map(async (url) => {
      let last = 'no attempt';
      for (;;) {
        last = await probe(url);
        if (last === 'ok') return undefined;
        if (Date.now() > deadline) return { url, last };
        await new Promise((r) => setTimeout(r, opts.pollMs ?? 200));
      }
    }),
  );
  return results.filter((r): r is { url: string; last: string } => r !== undefined);
}

async function probe(url: string): Promise<string> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a URL';
  }
  try {
    if (u.protocol === 'http:' || u.protocol === 'https:') {
      const r = await fetch(u, { signal: AbortSignal.timeout(2000) });
      await r.body?.cancel();
      return r.ok ? 'ok' : `HTTP ${r.status}`;
    }
    const port = Number(u.port || (u.protocol === 'wss:' ? 443 : 80));
    await tcpOpen(u.hostname.replace(/^\[|\]$/g, ''), port);
    return 'ok';
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return cause ?? (err instanceof Error ? err.message : String(err));
  }
}

function tcpOpen(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port }, () => {
      s.destroy();
      resolve();
    });
    s.once('error', reject);
    s.setTimeout(2000, () => s.destroy(new Error('timeout')));
  });
}
