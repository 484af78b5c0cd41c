import { spendSuite } from './spend-suite.js';

// The send / payout / solvency suite on the redis proof store.
spendSuite('redis');
