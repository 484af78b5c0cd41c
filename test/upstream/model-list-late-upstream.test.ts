import { afterEach, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { ModelCatalog, PartialModelList } from '../../core/upstream/model-catalog.js';
import { freePort } from '../../scripts/lib/net.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

/**
 * The model list follows its upstream: a gateway whose upstream was not reachable at start retries the list with
 * backoff until it answers, instead of showing an empty /v1/models until the periodic refresh (10 minutes). The
 * upstream here is the mock provider started on the gateway's upstream port after the gateway answers.
 */
describe('a gateway whose upstream starts late', () => {
  let gw: TestGateway | undefined;
  let upstream: MockUpstream | undefined;
  afterEach(async () => {
    await gw?.close();
    await upstream?.close();
    gw = undefined;
    upstream = undefined;
  });

  it('lists the upstream models within seconds of the upstream starting (periodic refresh: 10 minutes)', async () => {
    const port = await freePort();
    gw = await startTestGateway({ engine: 'node', upstreamUrl: `http://127.0.0.1:${port}/v1` });
    const ids = async () =>
      ((await (await fetch(`${gw!.url}/v1/models`)).json()) as { data: Array<{ id: string }> }).data.map(
        (m) => m.id,
      );
    expect(await ids()).toEqual([]);
    upstream = await startMockUpstream({ port });
    // Backoff from 1 s doubling: at most ~2 s after the upstream comes, given how long it has been down here.
    await until(
      'the late upstream models in /v1/models',
      async () => (await ids()).includes('mock-gpt'),
      20_000,
    );
  });

  it('backs off: retries double from retryMs up to retryMaxMs, and stop once the list answers', async () => {
    const at: number[] = [];
    let answer = false;
    const catalog = new ModelCatalog({
      retryMs: 20,
      retryMaxMs: 80,
      fetchModels: async () => {
        at.push(Date.now());
        if (!answer) throw new Error('connect ECONNREFUSED');
        return { object: 'list', data: [{ id: 'late-model' }] };
      },
    });
    await catalog.start();
    await until('five failed fetches', () => at.length >= 5);
    const gaps = at.slice(1, 5).map((t, i) => t - at[i]!);
    // 20, 40, 80, 80 ms planned; a loaded machine only makes timers later, never earlier.
    expect(gaps[0]).toBeGreaterThanOrEqual(19);
    expect(gaps[1]).toBeGreaterThanOrEqual(39);
    expect(gaps[2]).toBeGreaterThanOrEqual(79);
    expect(gaps[3]).toBeGreaterThanOrEqual(79);
    answer = true;
    await until('the list', () => catalog.get('late-model') !== undefined);
    // No retry is armed any more: the only later fetch would be the periodic refresh (10 minutes).
    expect((catalog as unknown as { retryTimer: unknown }).retryTimer).toBeUndefined();
    catalog.stop();
  });

  it('some providers answered: their models now, and a retry until the others answer', async () => {
    let calls = 0;
    const catalog = new ModelCatalog({
      retryMs: 10,
      fetchModels: async () => {
        calls++;
        if (calls === 1) throw new PartialModelList({ object: 'list', data: [{ id: 'first' }] }, ['b']);
        return { object: 'list', data: [{ id: 'first' }, { id: 'second' }] };
      },
    });
    await catalog.start();
    expect(catalog.get('first')).toBeDefined();
    expect(catalog.get('second')).toBeUndefined();
    await until('the retry', () => catalog.get('second') !== undefined);
    expect(calls).toBe(2);
    catalog.stop();
  });
});
