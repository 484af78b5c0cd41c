import { lightningDepositsCrashSuite } from './lightning-deposits-crash-suite.js';

lightningDepositsCrashSuite('redis');
