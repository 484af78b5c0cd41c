import { afterAll, beforeAll } from 'vitest';
import { type PaidProcesses, paidProcesses } from '../../support/paid-process.js';
import type { ProcessStoreKind } from '../../support/process-store.js';
import { Receiver } from './receiver.js';

/** Two gateway processes on one store, and a webhook receiver, for a describe block (started before its tests). */
export interface TwoProcesses {
  /** The rig (mint, upstream, store) the processes share. */
  rig(): PaidProcesses;
  /** The base URL of process `i % 2`. */
  base(i: number): string;
  readonly rx: Receiver;
}

/**
 * Registers the hooks: a receiver, then two gateways spawned with the webhook settings a test on loopback needs
 * (private URLs allowed, the outbox polled every 50 ms, 1 sat a call) and `env`; closed after the block.
 */
export function twoProcessesPerSuite(store: ProcessStoreKind, env: Record<string, string>): TwoProcesses {
  let rig: PaidProcesses | undefined;
  const ports: number[] = [];
  const rx = new Receiver();
  beforeAll(async () => {
    await rx.start();
    rig = await paidProcesses(store);
    const all = {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_MS: '50',
      FIXED_COST_PER_REQUEST: '1',
      ...env,
    };
    for (const gw of [await rig.spawn(all), await rig.spawn(all)]) ports.push(gw.port);
  }, 120_000);
  afterAll(async () => {
    rx.close();
    await rig?.close();
  });
  return {
    rig: () => rig!,
    base: (i) => `http://127.0.0.1:${ports[i % 2]!}`,
    rx,
  };
}
