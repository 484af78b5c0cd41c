import { conformance } from './support/conformance.js';
import { redisFactory } from './support/harness.js';

conformance(redisFactory());
