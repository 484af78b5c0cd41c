import { receiveSuite } from './receive-suite.js';

// The receive suite on the redis proof store (split per store to keep each file well under a minute).
receiveSuite('redis');
