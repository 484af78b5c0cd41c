/** The part of autocannon's API the bench uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    overallRate?: number;
    timeout?: number;
    requests?: Array<
      RequestParams & { setupRequest?: (req: RequestParams, context: object) => RequestParams }
    >;
  }

  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    resets: number;
    statusCodeStats: Record<string, { count: number }>;
    requests: { total: number; average: number };
  }

  interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
