import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/config.js';
import type { Plugin } from '../../core/plugin.js';
import type { Services } from '../../core/service-types.js';
import { buildPlugins, unchargedStages } from '../../plugins/index.js';

const named = (...names: string[]): Plugin[] => names.map((name) => ({ name }));

describe('plugin registry', () => {
  it('names the charging stages a relaying pipeline lacks', () => {
    expect(unchargedStages(named('auth', 'rate-limit', 'reserve', 'relay', 'meter', 'settle'))).toEqual([]);
    expect(unchargedStages(named('relay'))).toEqual(['auth', 'reserve', 'settle']);
    expect(unchargedStages(named('auth', 'relay', 'settle'))).toEqual(['reserve']);
    expect(unchargedStages(named('auth'))).toEqual([]);
  });

  it('warns loudly when a configured pipeline would serve calls for free', () => {
    const warnings: unknown[][] = [];
    const log = { warn: (...args: unknown[]) => warnings.push(args) } as never;
    buildPlugins([{ name: 'relay' }], {} as Services, log);
    expect(JSON.stringify(warnings)).toMatch(/FREE/);
  });

  it('refuses an unknown stage name at start-up', () => {
    expect(() => buildPlugins(['no-such-stage'], {} as Services)).toThrow(ConfigError);
  });
});
