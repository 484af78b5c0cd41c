export const handOver = 1;
