import { describe, expect, it } from 'vitest';
import { CATCH_ALL_TEMPLATE, Router } from '../../core/http/router.js';
import { parseRelayPaths } from '../../core/relay-paths.js';

describe('router', () => {
  const handler = () => ({ json: {} });
  const router = new Router()
    .get('/v1/models', handler)
    .get('/v1/providers/{provider_name}', handler)
    .pipeline('POST', '/v1/chat/completions')
    .catchAll(
      '/v1/',
      parseRelayPaths('* /v1/images/generations=0,GET /v1/fine_tuning/jobs/*=5,POST /v1/vector_stores/**=7'),
    );

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

  it('sends other /v1/ paths RELAY_PATHS lists, any method it allows, to the paid pipeline catch-all', () => {
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

  it('answers not_enabled for /v1/ paths RELAY_PATHS does not list (method, one segment, one or more)', () => {
    expect(router.match('POST', '/v1/fine_tuning/jobs').kind).toBe('not_enabled');
    expect(router.match('GET', '/v1/fine_tuning/jobs/ft-1').kind).toBe('route');
    expect(router.match('POST', '/v1/fine_tuning/jobs/ft-1').kind).toBe('not_enabled');
    expect(router.match('GET', '/v1/fine_tuning/jobs/ft-1/events').kind).toBe('not_enabled');
    expect(router.match('POST', '/v1/vector_stores').kind).toBe('not_enabled');
    expect(router.match('POST', '/v1/vector_stores/vs-1/files').kind).toBe('route');
    expect(new Router().catchAll('/v1/', []).match('POST', '/v1/assistants').kind).toBe('not_enabled');
  });

  it('refuses malformed RELAY_PATHS entries, naming them', () => {
    expect(() => parseRelayPaths('/v1/x=1')).toThrow(/"\/v1\/x=1" is not "METHOD \/v1\/path=MSATS"/);
    expect(() => parseRelayPaths('FETCH /v1/x=1')).toThrow(/unknown method FETCH/);
    expect(() => parseRelayPaths('GET /admin/x=1')).toThrow(/must be under \/v1\//);
    expect(() => parseRelayPaths('GET /v1/**/x=1')).toThrow(/bad path segment "\*\*"/);
    expect(() => parseRelayPaths('GET /v1/x=-1')).toThrow(/is not "METHOD/);
    expect(parseRelayPaths(' get /v1/models/*=0 , ')).toMatchObject([
      { method: 'GET', pattern: '/v1/models/*', msat: 0 },
    ]);
  });

  it('does not route paths outside /v1/', () => {
    expect(router.match('GET', '/admin/x').kind).toBe('none');
    expect(router.match('GET', '/v1/').kind).toBe('none');
  });

  it('refuses a route registered twice', () => {
    expect(() => new Router().get('/a', handler).get('/a', handler)).toThrow(/twice/);
  });
});
