import { describe, expect, it } from 'vitest';
import { CATCH_ALL_TEMPLATE, Router } from '../../core/http/router.js';

describe('router', () => {
  const handler = () => ({ json: {} });
  const router = new Router()
    .get('/v1/models', handler)
    .get('/v1/providers/{provider_name}', handler)
    .pipeline('POST', '/v1/chat/completions')
    .catchAll('/v1/');

  it('matches exact routes, HEAD as GET', () => {
    const m = router.match('GET', '/v1/models');
    expect(m.kind === 'route' && m.route.template).toBe('/v1/models');
    expect(router.match('HEAD', '/v1/models').kind).toBe('route');
  });

  it('extracts decoded template params', () => {
    const m = router.match('GET', '/v1/providers/open%20ai');
    expect(m).toMatchObject({ kind: 'route', params: { provider_name: 'open ai' } });
  });

  it('answers method_not_allowed with the allowed methods on a known path', () => {
    expect(router.match('GET', '/v1/chat/completions')).toEqual({
      kind: 'method_not_allowed',
      allowed: ['POST'],
    });
  });

  it('sends other /v1/ paths, any method, to the paid pipeline catch-all', () => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) {
      const m = router.match(method, '/v1/images/generations');
      expect(m.kind).toBe('route');
      if (m.kind === 'route') {
        expect(m.route.target).toBe('pipeline');
        expect(m.route.template).toBe(CATCH_ALL_TEMPLATE);
        expect(m.route.json).toBe(false);
      }
    }
  });

  it('does not route paths outside /v1/', () => {
    expect(router.match('GET', '/admin/x').kind).toBe('none');
    expect(router.match('GET', '/v1/').kind).toBe('none');
  });

  it('refuses a route registered twice', () => {
    expect(() => new Router().get('/a', handler).get('/a', handler)).toThrow(/twice/);
  });
});
