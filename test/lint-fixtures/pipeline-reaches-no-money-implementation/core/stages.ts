import type { RequestContext } from './context.js';
import type { Plugin } from './plugin.js';

export type Stage = (ctx: RequestContext, plugin: Plugin) => Promise<void>;
