import { createLocalKey } from './context.js';
import type { CallTrace } from './trace-context.js';

/**
 * The call's trace context on its request (set by core/otel-tracing.ts when tracing is on). Apart from
 * trace-context.ts, which the money steps use for their operation spans and which must not reach the request
 * context (and through it the HTTP exchange): `npm run lint`, rule money-reaches-no-http.
 */
export const CALL_TRACE = createLocalKey<CallTrace>('call-trace');
