import { conformance } from './support/conformance.js';
import { sqliteFactory } from './support/harness.js';

conformance(sqliteFactory());
