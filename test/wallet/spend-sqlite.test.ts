import { spendSuite } from './spend-suite.js';

// The send / payout / solvency suite on the sqlite proof store.
spendSuite('sqlite');
