import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../core/openapi/document.js';
import { ModelsSyncError, syncModels } from '../../scripts/lib/models-sync.js';
import { freePort } from '../../scripts/lib/net.js';

/**
 * `npm run models:sync` when the upstream cannot be read: the message names the URL it tried and the setting to
 * set (UPSTREAM_BASE_URL; UPSTREAM_API_KEY when the provider refuses the key), and the script prints that one line,
 * no stack.
 */
describe('models:sync messages', () => {
  let dir: string;
  let refusing: Server;
  let refusingUrl: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'models-sync-'));
    refusing = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":"bad key"}');
    });
    await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
    refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((r) => refusing.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('an upstream that does not answer: the URL tried, the reason, and UPSTREAM_BASE_URL', async () => {
    const port = await freePort();
    const err = await syncModels({ baseUrl: `http://127.0.0.1:${port}/v1`, path: join(dir, 'm.json') }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ModelsSyncError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^could not read the model list at http://127\\.0\\.0\\.1:${port}/v1/models \\(ECONNREFUSED\\)\\. Set UPSTREAM_BASE_URL`,
      ),
    );
  });

  it('an upstream that refuses the key: 401 and UPSTREAM_API_KEY', async () => {
    const err = await syncModels({ baseUrl: refusingUrl, apiKey: 'nope', path: join(dir, 'm.json') }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ModelsSyncError);
    expect((err as Error).message).toBe(
      `GET ${refusingUrl}/models answered 401. Set UPSTREAM_API_KEY to a key this provider accepts`,
    );
  });

  it('the script prints the one line, no stack, and exits 1', async () => {
    const port = await freePort();
    const r = await new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', 'scripts/models-sync.ts', '--out', join(dir, 'out.json')],
        {
          cwd: projectRoot(),
          env: {
            PATH: process.env.PATH ?? '',
            UPSTREAM_BASE_URL: `http://127.0.0.1:${port}/v1`,
            ENV_FILE: '',
          },
        },
        (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(
      new RegExp(
        `^models:sync: could not read the model list at http://127\\.0\\.0\\.1:${port}/v1/models \\(ECONNREFUSED\\)\\. Set UPSTREAM_BASE_URL[^\\n]*$`,
      ),
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
