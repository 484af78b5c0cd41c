/** The one-minute soak slice the test command runs (soak-slice.test.ts), and the report fixture's config. */
export const SOAK_SLICE = {
  minutes: 1,
  rate: 200,
  keys: 1000,
  streamShare: 0.5,
  store: 'redis',
  connections: 32,
} as const;
