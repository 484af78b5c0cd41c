// Breaks no-circular: a types module and the module it describes import each other (type-only counts).
import type { RateCard } from './rate-card.js';

export interface PriceList {
  card: RateCard;
}
