import { type Child, startChild } from '../lib/processes.js';
import type { MockBehaviour } from '../upstream/mock-upstream.js';

/** The bench's mock upstream process (see bench/support/upstream-child.ts). */
export interface UpstreamProcess {
  child: Child;
  /** Base URL including /v1. */
  url: string;
  port: number;
  setBehaviour(b: Partial<MockBehaviour>): Promise<void>;
  stop(): Promise<void>;
}

export async function startUpstream(): Promise<UpstreamProcess> {
  const child = startChild(process.execPath, ['--import', 'tsx', 'bench/support/upstream-child.ts', '0'], {
    ipc: true,
    role: 'rest',
  });
  const ready = await new Promise<{ url: string; port: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mock upstream did not start: ${child.tail()}`)), 20_000);
    child.proc.once('message', (m: { type: string; url: string; port: number }) => {
      clearTimeout(timer);
      resolve(m);
    });
    child.proc.once('exit', () => reject(new Error(`mock upstream exited: ${child.tail()}`)));
  });
  return {
    child,
    url: ready.url,
    port: ready.port,
    setBehaviour(behaviour) {
      return new Promise((resolve) => {
        child.proc.once('message', () => resolve());
        child.proc.send({ type: 'behaviour', behaviour });
      });
    },
    async stop() {
      child.proc.disconnect?.();
      await child.stop();
    },
  };
}
