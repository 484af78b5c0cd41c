import { lightningDepositsSuite } from './lightning-deposits-suite.js';

lightningDepositsSuite('redis');
