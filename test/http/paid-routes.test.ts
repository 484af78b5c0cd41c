import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listOperations, projectRoot } from '../../core/openapi/index.js';
import { PAID_ROUTES, pricedEndpointOf } from '../../core/paid-routes.js';

/** The one paid-route table (core/paid-routes.ts) against the OpenAPI document and the architecture doc. */
describe('the paid-route table', () => {
  it('names only operations the OpenAPI document describes', () => {
    const documented = new Set(listOperations().map((o) => `${o.method.toUpperCase()} ${o.path}`));
    for (const r of PAID_ROUTES)
      expect(documented, `${r.method} ${r.path}`).toContain(`${r.method} ${r.path}`);
  });

  it('is the list docs/architecture.md gives', () => {
    const doc = readFileSync(join(projectRoot(), 'docs', 'architecture.md'), 'utf8');
    for (const r of PAID_ROUTES) expect(doc, r.path).toContain(`\`${r.path}\``);
  });

  it('says which metered API a call is; other methods and paths are per-request `other` calls', () => {
    expect(pricedEndpointOf('POST', '/v1/chat/completions')).toBe('chat');
    expect(pricedEndpointOf('POST', '/v1/audio/translations')).toBe('audio');
    expect(pricedEndpointOf('GET', '/v1/chat/completions')).toBe('other');
    expect(pricedEndpointOf('POST', '/v1/{path}')).toBe('other');
  });
});
