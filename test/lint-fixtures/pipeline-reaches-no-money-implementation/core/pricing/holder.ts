export class PricingHolder {
  current = 0;
}
