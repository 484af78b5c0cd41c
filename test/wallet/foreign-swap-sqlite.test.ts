import { foreignSwapSuite } from './foreign-swap-suite.js';

foreignSwapSuite('sqlite');
