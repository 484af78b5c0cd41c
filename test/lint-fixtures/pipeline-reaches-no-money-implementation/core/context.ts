// Allowed: the request context names metering through its types module.
import type { Usage } from './metering/types.js';

export interface RequestContext {
  usage?: Usage;
}
