import { describe, expect, it } from 'vitest';
import { spliceCostBlock } from '../../plugins/settle.js';

describe('x-node-cost splice', () => {
  const block = {
    sats: 3,
    msats: 2146,
    usd: 0,
    breakdown: { prompt_cost: 42, completion_cost: 104, fees: 2000 },
  };

  it('adds the block before the closing brace and leaves the rest byte for byte', () => {
    const body = Buffer.from('{"id":"x","n":1.50,"s":"é}"}\n');
    const out = spliceCostBlock(body, block)!;
    expect(out.toString()).toBe(`{"id":"x","n":1.50,"s":"é}","x-node-cost":${JSON.stringify(block)}}\n`);
    expect(JSON.parse(out.toString())['x-node-cost']).toEqual(block);
  });

  it('handles an empty object and surrounding whitespace', () => {
    expect(JSON.parse(spliceCostBlock(Buffer.from(' { } '), block)!.toString())).toEqual({
      'x-node-cost': block,
    });
  });

  it('refuses what is not a JSON object', () => {
    expect(spliceCostBlock(Buffer.from('[1,2]'), block)).toBeUndefined();
    expect(spliceCostBlock(Buffer.from('plain text'), block)).toBeUndefined();
    expect(spliceCostBlock(Buffer.from(''), block)).toBeUndefined();
  });
});
