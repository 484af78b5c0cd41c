import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, stdoutDestination } from '../core/log.js';
import { until } from './support/until.js';

/**
 * The log destination on stdout (core/log.ts): logging never keeps the process from running or exiting. Real
 * pipes of a child process stand in for a supervisor's: one whose reader has exited (EPIPE), one whose reader
 * never reads (a full pipe).
 */

const children: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** The write end of a pipe to a child that runs `script` and never reads its stdin. */
function pipeTo(script: string): { child: ReturnType<typeof spawn>; out: Writable } {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(child);
  return { child, out: child.stdin! };
}

describe('stdoutDestination', () => {
  it('a write error (EPIPE: the reader closed its end) stops writing; later lines neither throw nor are written', async () => {
    // The reader closes its end and lives on (so the pipe is not torn down with the child).
    const { child, out } = pipeTo(
      "require('fs').closeSync(0); process.stdout.write('closed'); setInterval(() => {}, 60_000)",
    );
    await once(child.stdout!, 'data');
    const write = vi.spyOn(out, 'write');
    const errors: Array<NodeJS.ErrnoException> = [];
    out.on('error', (err) => errors.push(err));
    const log = createLogger('info', stdoutDestination(out as unknown as NodeJS.WriteStream));
    log.info('first line, into a pipe nobody reads any more');
    await until('the write error', () => errors.length > 0, 5_000, 5);
    expect(errors[0]!.code).toBe('EPIPE');
    const written = write.mock.calls.length;
    expect(written).toBe(1);
    for (let i = 0; i < 1000; i++) expect(() => log.info({ i }, 'after the reader left')).not.toThrow();
    log.error(new Error('an error object too'));
    expect(write.mock.calls.length).toBe(written);
  });

  it('a reader that never reads: each line returns at once, and what waits in memory stays bounded', async () => {
    const { out } = pipeTo('setInterval(() => {}, 60_000)');
    const max = 256 * 1024;
    const write = vi.spyOn(out, 'write');
    const dest = stdoutDestination(out as unknown as NodeJS.WriteStream, max);
    const line = `${JSON.stringify({ msg: 'x'.repeat(1000) })}\n`;
    const t0 = performance.now();
    // 8 MB of lines: far beyond the pipe's buffer (64 KB) and the queue bound.
    for (let i = 0; i < 8000; i++) dest.write(line);
    const ms = performance.now() - t0;
    // Nothing waited for the reader: the loop did not stop at the full pipe (a blocking write would hang here).
    expect(ms).toBeLessThan(2_000);
    // Lines past the bound were dropped, not queued: the queue is at most the bound plus one line.
    expect(out.writableLength).toBeLessThanOrEqual(max + line.length);
    expect(write.mock.calls.length).toBeLessThan(8000);
    expect(write.mock.calls.length).toBeGreaterThan(max / line.length - 1);
    // The event loop still turns (a timer fires) while the pipe stays full.
    await new Promise((r) => setImmediate(r));
    dest.write(line);
    expect(out.writableLength).toBeLessThanOrEqual(max + line.length);
  });
});
