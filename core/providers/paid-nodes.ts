import { ConfigError } from '../config.js';
import type { Ledger } from '../ledger/types.js';
import type { Logger } from '../log.js';
import type { StoreConnection } from '../store/connection.js';
import type { WalletService } from '../wallet/types.js';
import { openNodeAccountStore } from './node-account-store.js';
import { NodeAccounts } from './node-accounts.js';
import { NodePayer, SurplusGate } from './node-payment.js';
import { NodePrices } from './node-prices.js';
import { isPaidNode } from './provider.js';
import type { PaidNodes as PaidNodesApi, Provider } from './types.js';

/**
 * The other nodes this one buys from (providers with `"payment": "cashu"` or `"cashu-balance"`,
 * docs/providers.md), as one service of the process: their advertised prices (node-prices.ts, which
 * `"pricing": "auto"` charges × its markup), the per-call tokens (node-payment.ts) and the prepaid keys
 * (node-accounts.ts), both paid through one surplus guard. Built by the composition root (core/services.ts) when
 * the providers file names such a node; the relay, reserve and settle stages read it from `services.nodes`.
 */
export class PaidNodes implements PaidNodesApi {
  readonly prices: NodePrices;
  /** Per-call tokens (`cashu` providers). */
  readonly payer: NodePayer;
  /** Prepaid keys (`cashu-balance` providers); undefined when none is configured. */
  readonly accounts: NodeAccounts | undefined;

  private constructor(
    private readonly providers: readonly Provider[],
    money: { wallet: WalletService; ledger: Ledger; store: StoreConnection | undefined; log: Logger },
  ) {
    const { wallet, ledger, store, log } = money;
    this.prices = new NodePrices({ log });
    const surplus = new SurplusGate({ wallet, ledger });
    this.payer = new NodePayer({ wallet, ledger, log, prices: this.prices, surplus });
    const prepaid = providers.some((p) => p.spec.payment === 'cashu-balance');
    if (prepaid && store === undefined) {
      throw new ConfigError(
        'a "payment": "cashu-balance" provider needs the money store (its key is kept there)',
      );
    }
    this.accounts =
      prepaid && store !== undefined
        ? new NodeAccounts({ store: openNodeAccountStore(store), surplus, wallet, log })
        : undefined;
  }

  /**
   * The paid nodes of `providers`, or undefined when there are none. @throws ConfigError when one is configured
   * without the wallet (CASHU_MINTS) and the money store.
   */
  static build(
    providers: readonly Provider[],
    money: {
      wallet: WalletService | undefined;
      ledger: Ledger | undefined;
      store: StoreConnection | undefined;
      log: Logger;
    },
  ): PaidNodes | undefined {
    const paid = providers.filter((p) => isPaidNode(p.spec));
    if (paid.length === 0) return undefined;
    const { wallet, ledger } = money;
    if (wallet === undefined || ledger === undefined) {
      throw new ConfigError(
        `the provider "${paid[0]!.name}" is a node paid with eCash: it needs the wallet (CASHU_MINTS) and the money store`,
      );
    }
    return new PaidNodes(providers, { ...money, wallet, ledger });
  }

  /**
   * At start: reads the prices of every `"pricing": "auto"` node. One that answers and prices none of the models its
   * entry serves (or not every model it names) stops the start with a message naming it; one that does not answer
   * is only warned about (it serves no call until its prices are read). Then keeps them fresh.
   */
  async start(log: Logger): Promise<void> {
    const auto = this.providers.filter((p) => p.spec.autoPricing !== undefined);
    await Promise.all(
      auto.map(async (p) => {
        let models: Map<string, unknown>;
        try {
          models = await this.prices.get(p);
        } catch (err) {
          log.warn(
            { provider: p.name, err: (err as Error).message },
            '"pricing": "auto": the node did not list its prices; it serves no call until it does',
          );
          return;
        }
        const named = p.namedModels;
        const missing = named === null ? [] : named.filter((m) => !models.has(m));
        if (models.size === 0 || missing.length > 0) {
          throw new ConfigError(
            `PROVIDERS_PATH: "${p.name}" has "pricing": "auto" but the node advertises no price (pricing.prompt_msats, completion_msats, request_msats in its /v1/models) for ${missing.length > 0 ? `the models ${missing.join(', ')}` : 'any model'}`,
          );
        }
      }),
    );
    this.prices.start(this.providers);
  }

  /** Stops the timers; a top-up in flight is waited for (its token is in the store either way). */
  async close(): Promise<void> {
    this.prices.close();
    this.accounts?.close();
    await this.accounts?.settled();
  }
}
