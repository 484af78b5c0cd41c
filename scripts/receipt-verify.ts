/**
 * `npm run -s receipt:verify -- <receipt> (--url <gateway URL> | --npub <npub1…>)`: checks a signed call receipt
 * (the `X-Receipt` header or a stream's `: x-receipt` comment, docs/paying.md "Receipts") against the node's key —
 * the `npub` its `GET /v1/info` names, or one given. Prints the receipt's JSON and exits 0 when it verifies; prints
 * why not and exits 1 otherwise. `-` reads the receipt from stdin.
 */
import { readFileSync } from 'node:fs';
import { verifyCallReceipt } from '../core/receipts/call-receipt.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<number> {
  const given = process.argv
    .slice(2)
    .find((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
  if (given === undefined) {
    console.error('usage: npm run -s receipt:verify -- <receipt|-> (--url <gateway URL> | --npub <npub1…>)');
    return 2;
  }
  const encoded = given === '-' ? readFileSync(0, 'utf8').trim() : given;
  let npub = arg('--npub');
  const url = arg('--url');
  if (npub === undefined && url !== undefined) {
    const res = await fetch(`${url.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/info`);
    if (!res.ok) {
      console.error(`GET /v1/info answered ${res.status}`);
      return 1;
    }
    npub = ((await res.json()) as { npub?: string }).npub;
  }
  if (npub === undefined || npub === '') {
    console.error('name the node: --url <gateway URL> or --npub <npub1…>');
    return 2;
  }
  const r = verifyCallReceipt(encoded, npub);
  if (!r.ok) {
    console.error(`receipt does NOT verify: ${r.reason}`);
    return 1;
  }
  console.log(JSON.stringify({ ok: true, npub, receipt: r.receipt }, null, 2));
  return 0;
}

process.exitCode = await main();
