import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOpenApiDocument, serveDocs } from '../../core/openapi/index.js';

const require = createRequire(import.meta.url);
const pkgDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

function get(path: string) {
  const r = serveDocs(path);
  if (r === undefined) throw new Error(`serveDocs(${path}) is undefined`);
  return r;
}

describe('serveDocs', () => {
  it('serves the document as JSON, equal to the yaml', () => {
    const r = get('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    const parsed = JSON.parse(String(r.body)) as { openapi: string; paths: Record<string, unknown> };
    expect(parsed).toEqual(loadOpenApiDocument());
    expect(parsed.openapi).toBe('3.0.3');
    expect(Object.keys(parsed.paths)).toContain('/v1/chat/completions');
    expect(get('/openapi.json').body).toBe(r.body); // cached
  });

  it('serves the Swagger UI page, its initializer and assets from swagger-ui-dist (no CDN)', () => {
    for (const path of ['/docs', '/docs/']) {
      const r = get(path);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(String(r.body)).toContain('<div id="swagger-ui">');
      expect(String(r.body)).not.toMatch(/https?:\/\//);
    }
    const html = String(get('/docs').body);
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(5);
    for (const ref of refs) expect(serveDocs(ref)?.status, ref).toBe(200);
    expect(String(get('/docs/swagger-initializer.js').body)).toContain("url: '/openapi.json'");
    const bundle = get('/docs/swagger-ui-bundle.js');
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // Buffer.equals, not toEqual: a deep compare of 1.7 MB byte by byte takes seconds.
    expect(
      Buffer.from(bundle.body).equals(readFileSync(join(pkgDir('swagger-ui-dist'), 'swagger-ui-bundle.js'))),
    ).toBe(true);
    expect(get('/docs/swagger-ui.css').headers['content-type']).toBe('text/css; charset=utf-8');
    expect(get('/docs/favicon-32x32.png').headers['content-type']).toBe('image/png');
  });

  it('serves the ReDoc page and its standalone bundle from redoc', () => {
    for (const path of ['/redoc', '/redoc/']) {
      const html = String(get(path).body);
      expect(html).toContain('<redoc spec-url="/openapi.json">');
      expect(html).toContain('src="/redoc/redoc.standalone.js"');
    }
    const bundle = get('/redoc/redoc.standalone.js');
    expect(bundle.status).toBe(200);
    expect(
      Buffer.from(bundle.body).equals(readFileSync(join(pkgDir('redoc'), 'bundles', 'redoc.standalone.js'))),
    ).toBe(true);
  });

  it('ignores a query string and answers undefined for anything else, traversal attempts included', () => {
    expect(get('/openapi.json?x=1').status).toBe(200);
    for (const path of [
      '/',
      '/v1/models',
      '/docs/index.html',
      '/docs/../package.json',
      '/docs/%2e%2e/package.json',
      '/docs/swagger-ui-bundle.js.map',
      '/redoc/redoc.standalone.js.map',
      '/openapi.yaml',
    ]) {
      expect(serveDocs(path), path).toBeUndefined();
    }
  });

  it('gives the pages a CSP that allows only this origin (ReDoc would fetch its logo from a CDN)', () => {
    for (const path of ['/docs', '/redoc']) {
      const csp = get(path).headers['content-security-policy'];
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("img-src 'self' data:");
      expect(csp).toContain("script-src 'self'");
    }
    expect(get('/openapi.json').headers['content-security-policy']).toBeUndefined();
  });

  it('sets nosniff and cache headers', () => {
    expect(get('/docs').headers['x-content-type-options']).toBe('nosniff');
    expect(get('/docs/swagger-ui-bundle.js').headers['cache-control']).toContain('max-age');
    expect(get('/openapi.json').headers['cache-control']).toBe('no-cache');
  });
});
