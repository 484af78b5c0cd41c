import { type MockBehaviour, startMockUpstream } from '../upstream/mock-upstream.js';

/**
 * The mock upstream in its own process (so its CPU is not the load generator's), controlled over IPC by the
 * bench runner: `{ type: 'behaviour', behaviour }` → `{ type: 'ok' }`. Completion length is chosen per
 * request with `max_tokens` (the mock produces min(chunks, max_tokens) tokens), so one process serves every
 * scenario. Usage: node --import tsx bench/support/upstream-child.ts <port>
 */

const port = Number(process.argv[2] ?? 0);
const mock = await startMockUpstream({ port, chunks: 1000 });

process.on('message', (msg: { type?: string; behaviour?: Partial<MockBehaviour> }) => {
  if (msg.type === 'behaviour' && msg.behaviour) {
    mock.setBehaviour(msg.behaviour);
    process.send?.({ type: 'ok' });
  } else if (msg.type === 'stats') {
    process.send?.({ type: 'stats', stats: { ...mock.stats, lastHeaders: undefined, lastBody: undefined } });
  }
});
process.on('disconnect', () => void mock.close().then(() => process.exit(0)));
process.on('SIGTERM', () => void mock.close().then(() => process.exit(0)));
process.send?.({ type: 'ready', url: mock.url, port: mock.port });
