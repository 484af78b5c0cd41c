import { describe, expect, it } from 'vitest';
import { Pipeline } from '../../core/pipeline.js';
import type { Plugin } from '../../core/plugin.js';

/** Each stage declares the stages it needs before it (`Plugin.after`); a wrong order fails when built. */
const stage = (name: string, after?: string[]): Plugin => ({ name, ...(after ? { after } : {}) });

describe('stage order', () => {
  it('builds a pipeline whose stages come after what they need', () => {
    const p = new Pipeline([stage('auth'), stage('reserve', ['auth']), stage('settle', ['reserve'])]);
    expect(p.plugins.map((q) => q.name)).toEqual(['auth', 'reserve', 'settle']);
  });

  it('refuses a stage listed before one it needs, naming both and the order', () => {
    expect(() => new Pipeline([stage('reserve', ['auth']), stage('auth')])).toThrow(
      'PIPELINE: "reserve" must come after "auth" ("auth" is listed after it): reserve, auth',
    );
  });

  it('refuses a stage whose required stage is missing', () => {
    expect(() => new Pipeline([stage('auth'), stage('relay'), stage('settle', ['reserve'])])).toThrow(
      'PIPELINE: "settle" must come after "reserve" ("reserve" is not in the pipeline): auth, relay, settle',
    );
  });
});
