export interface Exchange {
  path: string;
}
