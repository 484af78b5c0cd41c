/**
 * Micro-benchmark: the stream meter's hand scanner vs eventsource-parser over the same realistic chat
 * stream (200 content chunks + usage + [DONE], one event per chunk as upstreams flush). Two parser
 * baselines: bare (feed + usage check only: less work than the meter does) and the same work (usage and the
 * produced text, via JSON.parse per event). Neither gives the byte offsets the meter needs to drop one
 * event without re-serialising the stream.
 * Run: npx tsx bench/micro/stream-meter.ts
 */

import { createParser } from 'eventsource-parser';
import { createStreamMeter } from '../../core/metering/stream-meter.js';
import { inputTotal, outputTotal } from '../../core/metering/usage.js';

const base = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini"';
const chunks: Uint8Array[] = [];
for (let i = 0; i < 200; i++) {
  chunks.push(
    Buffer.from(
      `data: ${base},"choices":[{"index":0,"delta":{"content":"token ${i} "},"finish_reason":null}],"usage":null}\n\n`,
    ),
  );
}
chunks.push(
  Buffer.from(
    `data: ${base},"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":400,"total_tokens":420}}\n\n`,
  ),
);
chunks.push(Buffer.from('data: [DONE]\n\n'));
const bytes = chunks.reduce((a, c) => a + c.byteLength, 0);

function scanner(): number {
  const m = createStreamMeter({ clientWantsUsage: false, model: 'gpt-4o-mini' });
  let n = 0;
  for (const c of chunks) if (m.push(c) !== undefined) n++;
  m.finalBytes();
  return n + (m.usage ? inputTotal(m.usage) + outputTotal(m.usage) : 0);
}

function parser(): number {
  let usage = 0;
  const decoder = new TextDecoder();
  const p = createParser({
    onEvent(ev) {
      if (ev.data !== '[DONE]' && ev.data.includes('"usage":{'))
        usage = JSON.parse(ev.data).usage.total_tokens;
    },
  });
  for (const c of chunks) p.feed(decoder.decode(c, { stream: true }));
  return usage;
}

/** The same work as the meter with eventsource-parser: usage, and the produced text of every event. */
function parserSameWork(): number {
  let usage = 0;
  const text: string[] = [];
  const decoder = new TextDecoder();
  const p = createParser({
    onEvent(ev) {
      if (ev.data === '[DONE]') return;
      const o = JSON.parse(ev.data);
      if (o.usage) usage = o.usage.total_tokens;
      for (const c of o.choices) if (typeof c.delta?.content === 'string') text.push(c.delta.content);
    },
  });
  for (const c of chunks) p.feed(decoder.decode(c, { stream: true }));
  return usage + text.length;
}

function measure(name: string, fn: () => number, rounds: number): number {
  for (let i = 0; i < 200; i++) fn(); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) fn();
  const ns = Number(process.hrtime.bigint() - t0) / rounds;
  const mbps = (bytes / ns) * 1e3;
  console.log(
    `${name.padEnd(22)} ${(ns / 1000).toFixed(1).padStart(8)} µs/stream  ${mbps.toFixed(0).padStart(6)} MB/s`,
  );
  return ns;
}

const rounds = Number(process.env.ROUNDS ?? 2000);
const a = measure('stream-meter scanner', scanner, rounds);
const b = measure('eventsource-parser', parser, rounds);
const c = measure('esp + JSON.parse/event', parserSameWork, rounds);
console.log(
  `scanner / bare parser: ${(a / b).toFixed(2)}; scanner / parser doing the same work: ${(a / c).toFixed(2)}`,
);
console.log(
  `(${chunks.length} chunks, ${bytes} bytes per stream; the bare parser neither keeps text nor gives offsets)`,
);
