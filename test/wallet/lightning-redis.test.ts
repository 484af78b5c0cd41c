import { lightningSuite } from './lightning-suite.js';

lightningSuite('redis');
