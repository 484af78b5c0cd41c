import { serverTiming } from './http/server-timing.js';

export const overheadMs = (ms: number): string => serverTiming(ms);
