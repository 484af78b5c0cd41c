import { foreignSwapSuite } from './foreign-swap-suite.js';

foreignSwapSuite('redis');
