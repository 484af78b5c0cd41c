import { crashRecoverySuite } from './crash-recovery-suite.js';

// Crash recovery on the redis proof store (split per store: each case spawns child processes).
crashRecoverySuite('redis');
