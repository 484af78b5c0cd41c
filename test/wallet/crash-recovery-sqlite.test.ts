import { crashRecoverySuite } from './crash-recovery-suite.js';

// Crash recovery on the sqlite proof store (split per store: each case spawns child processes).
crashRecoverySuite('sqlite');
