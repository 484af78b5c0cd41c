import { describe, expect, it } from 'vitest';
import { nodeSupport } from '../core/node-version.js';

/** What the gateway says at start on each Node.js version (core/main.ts; README "Set-up"). */
describe('Node.js versions', () => {
  it('supports Node 22.12+ and 24 LTS', () => {
    for (const v of ['v22.12.0', 'v22.20.1', 'v24.0.0', 'v24.21.0', 'v25.1.0']) {
      expect(nodeSupport(v)).toEqual({ kind: 'supported' });
    }
  });

  it('starts on Node 20.19+ with an end-of-life warning', () => {
    const s = nodeSupport('v20.20.2');
    expect(s.kind).toBe('end_of_life');
    expect(s.kind !== 'supported' && s.message).toMatch(/v20\.20\.2 reached its end of life on 2026-04-30/);
  });

  it('refuses older versions at start, saying which it needs', () => {
    for (const v of ['v18.20.0', 'v20.18.3', 'v22.11.0', 'v21.7.3']) {
      const s = nodeSupport(v);
      expect(s.kind).toBe('refused');
      expect(s.kind !== 'supported' && s.message).toMatch(/needs Node 22 \(22\.12\+\) or 24 LTS/);
    }
  });

  it('the running Node is one the gateway starts on', () => {
    expect(nodeSupport(process.version).kind).not.toBe('refused');
  });
});
