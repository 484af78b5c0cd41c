// Breaks pipeline-reaches-no-money-implementation: the plugin contract names a pricing implementation module
// (directly), and so the runner (core/stages.ts), which only imports the contract, reaches it too.
import type { RequestContext } from './context.js';
import type { PricingHolder } from './pricing/holder.js';

export interface Plugin {
  onRequest(ctx: RequestContext, pricing: PricingHolder): Promise<void>;
}
