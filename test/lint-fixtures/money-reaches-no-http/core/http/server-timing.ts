export const serverTiming = (ms: number): string => `gw;dur=${ms}`;
