import { lightningSuite } from './lightning-suite.js';

lightningSuite('sqlite');
