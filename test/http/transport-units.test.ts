import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../core/errors.js';
import { Cors } from '../../core/http/cors.js';
import { listen } from '../../core/http/engine.js';
import { jsonErrorPosition } from '../../core/http/json-error-position.js';
import { acceptsGzip, isCompressible } from '../../core/http/respond.js';
import { parseJson } from '../../core/http/transport.js';
import { loadUws } from '../../core/http/uws-engine.js';
import { createLogger, type Logger } from '../../core/log.js';

describe('JSON error position', () => {
  it.each([
    ['{"a":1}', -1],
    ['[1,2,]', 5],
    ['{"a" 1}', 5],
    ['{"a":tru}', 8],
    ['{"a":"x\u0001"}', 7],
    ['{"a":1} x', 8],
    ['{"a":[1,2', 9],
    ['', 0],
    ['{"a":"\\q"}', 7],
    ['-01', 2],
  ])('%j → %i', (text, pos) => {
    expect(jsonErrorPosition(text)).toBe(pos);
  });

  it('agrees with JSON.parse on validity for a sample of texts', () => {
    const samples = [
      '{"a":[1,{"b":null}],"c":"\\u00e9"}',
      '[true,false,1e5,-0.5]',
      '"x"',
      '{"a":}',
      '[01]',
      '{,}',
    ];
    for (const s of samples) {
      let valid = true;
      try {
        JSON.parse(s);
      } catch {
        valid = false;
      }
      expect(jsonErrorPosition(s) === -1).toBe(valid);
    }
  });

  it('parseJson throws invalid_json with position, line and column', () => {
    try {
      parseJson(Buffer.from('{\n  "a": 1,\n  "b": }'));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayError);
      const ge = err as GatewayError;
      expect(ge.code).toBe('invalid_json');
      expect(ge.details).toEqual({ position: 19, line: 3, column: 8 });
    }
  });

  it('reports a premature end as such', () => {
    expect(() => parseJson(Buffer.from('{"a":'))).toThrow(/unexpected end of input/);
  });
});

describe('gzip negotiation', () => {
  it('accepts gzip unless q=0', () => {
    expect(acceptsGzip({ 'accept-encoding': 'gzip, deflate, br' })).toBe(true);
    expect(acceptsGzip({ 'accept-encoding': 'br;q=1, gzip;q=0.5' })).toBe(true);
    expect(acceptsGzip({ 'accept-encoding': 'gzip;q=0' })).toBe(false);
    expect(acceptsGzip({ 'accept-encoding': 'br' })).toBe(false);
    expect(acceptsGzip({})).toBe(false);
  });

  it('compresses JSON and text, never SSE or binary', () => {
    expect(isCompressible('application/json; charset=utf-8')).toBe(true);
    expect(isCompressible('text/html')).toBe(true);
    expect(isCompressible('text/event-stream')).toBe(false);
    expect(isCompressible('audio/mpeg')).toBe(false);
    expect(isCompressible(undefined)).toBe(false);
  });
});

describe('CORS', () => {
  it('defaults to any origin', () => {
    const h: Record<string, string> = {};
    new Cors(['*']).preflight('https://a.example', h);
    expect(h['access-control-allow-origin']).toBe('*');
    expect(h['access-control-allow-methods']).toBe('GET, POST, PUT, PATCH, DELETE, OPTIONS');
    expect(h['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, X-Cashu, X-Request-ID, X-Api-Key, Anthropic-Version, Anthropic-Beta, Prefer',
    );
    expect(h['access-control-max-age']).toBe('86400');
  });

  it('echoes a listed origin and ignores others', () => {
    const cors = new Cors(['https://a.example']);
    const ok: Record<string, string> = {};
    cors.headers('https://a.example', ok);
    expect(ok['access-control-allow-origin']).toBe('https://a.example');
    expect(ok.vary).toBe('origin');
    const no: Record<string, string> = {};
    cors.preflight('https://evil.example', no);
    expect(no).toEqual({});
  });
});

describe('engine selection', () => {
  /** The uWS engine asked for, answering every request `ok` on a free loopback port. */
  const listenUws = (log?: Logger, load?: Parameters<typeof listen>[4]) =>
    listen(
      'uws',
      (ex) => {
        ex.writeHead(200, {});
        ex.end('ok');
      },
      { host: '127.0.0.1', port: 0, maxBodyBytes: 1024, maxHeaderBytes: 65536 },
      log,
      load,
    );

  it('falls back to node:http with one warning when the uWS binary cannot load', async () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (l: string) => lines.push(l) });
    const server = await listenUws(log, () => {
      throw new Error('ERR_DLOPEN_FAILED: GLIBC_2.38 not found');
    });
    try {
      expect(server.engine).toBe('node');
      expect(await (await fetch(`http://127.0.0.1:${server.port}/`)).text()).toBe('ok');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/falling back to the node:http engine/);
      // What GET /readyz says (core/routes/health.ts): the Node version, its ABI and the loader's reason.
      expect(server.fallback).toBe(
        `uWebSockets.js could not load on Node ${process.versions.node} (${process.platform}-${process.arch}, ABI ${process.versions.modules}): ERR_DLOPEN_FAILED: GLIBC_2.38 not found`,
      );
    } finally {
      await server.close();
    }
  });

  it('serves with uWS where the binary loads (Node 20 here; no build loads on Node 22/24 with glibc 2.36)', async () => {
    let loads = true;
    try {
      loadUws();
    } catch {
      loads = false;
    }
    expect(loads).toBe(Number(process.versions.modules) === 115);
    const server = await listenUws();
    try {
      expect(server.engine).toBe(loads ? 'uws' : 'node');
      expect(server.fallback === undefined).toBe(loads);
      expect(await (await fetch(`http://127.0.0.1:${server.port}/`)).text()).toBe('ok');
    } finally {
      await server.close();
    }
  });
});
