import type { PriceList } from './types.js';

export interface RateCard {
  list?: PriceList;
}
