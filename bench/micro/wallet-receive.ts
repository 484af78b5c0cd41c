import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { createLogger } from '../../core/log.js';
import { openStore } from '../../core/store/connection.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { startDevMint } from '../../scripts/mint/index.js';

/**
 * The CPU of an eCash receive in the gateway's wallet, and the longest event-loop stall it causes: the dev mint
 * in this process (its signing is counted too: ≈ 1 ms a proof on libsecp256k1), the wallet on SQLite in memory.
 * Receives `--n` tokens of `--proofs` proofs each (an amount of 2^proofs − 1 sats: one proof per power of two),
 * one at a time after one unmeasured warm-up receive, and prints the CPU per receive and the loop's longest stall.
 *   npx tsx bench/micro/wallet-receive.ts [-- --n 11] [--proofs 12]
 */
const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const N = arg('n', 11);
const PROOFS = arg('proofs', 12);

const mint = await startDevMint({ port: 0 });
const conn = openStore({ sqliteFile: ':memory:' });
const quiet = createLogger('error', new Writable({ write: (_c, _e, cb) => cb() }));
const wallet = await createWallet({ conn, mints: [mint.url], log: quiet, mintTimeoutMs: 60_000 });
const amount = 2 ** PROOFS - 1;
const tokens = await Promise.all(Array.from({ length: N + 1 }, () => mint.mintTokens(amount)));
await wallet.receive(tokens[0]!); // warm-up: the mint's keys loaded, the code compiled

const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
const cpu: number[] = [];
for (const token of tokens.slice(1)) {
  const before = process.cpuUsage();
  await wallet.receive(token);
  const used = process.cpuUsage(before);
  cpu.push((used.user + used.system) / 1000);
}
loop.disable();
cpu.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    receives: N,
    proofsEach: PROOFS,
    cpuMsMedian: Math.round(cpu[Math.floor(cpu.length / 2)]!),
    cpuMsMin: Math.round(cpu[0]!),
    cpuMsMax: Math.round(cpu[cpu.length - 1]!),
    loopStallMaxMs: Math.round(loop.max / 1e6),
  }),
);
await wallet.close?.();
await conn.close();
await mint.close();
