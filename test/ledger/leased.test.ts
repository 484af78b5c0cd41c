import { conformance } from './support/conformance.js';
import { leasedFactory, redisFactory, sqliteFactory } from './support/harness.js';

// The whole conformance suite through the credit-lease wrapper (LEDGER_LEASES=on, the default), on both
// stores; redis-cluster.test.ts runs it on the cluster it starts.
conformance(leasedFactory(sqliteFactory()));
conformance(leasedFactory(redisFactory()));
