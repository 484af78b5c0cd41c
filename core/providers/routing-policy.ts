import type { Provider, RoutingPolicy } from './types.js';

/**
 * Routing policies (docs/providers.md, "Routing"): the order in which a call's providers are tried. Every
 * policy — the four built-in ones below and any a plugin registers (`services.providers.registerPolicy`,
 * docs/plugins.md) — is one object behind this interface, named by `ROUTING_POLICY` (the node's default) or
 * per model by the providers file's `routing`.
 *
 * A policy only orders: which providers serve the model is decided before (`Provider.serves`), and the circuit
 * breakers are applied after (the relay skips a provider whose breaker is open), so a policy needs to know
 * neither. The interface (`RoutingPolicy`, with `RoutingInfo`) is in ./types.ts, for the plugin contract.
 */

const byPriority = (a: Provider, b: Provider) => a.spec.priority - b.spec.priority;

/** Lower `priority` first, ties in the file's order (Array.prototype.sort is stable). */
export const priorityPolicy: RoutingPolicy = {
  name: 'priority',
  order: (providers) => [...providers].sort(byPriority),
};

/** A random order drawn by `weight`: each pick proportional to the weights left. */
export const weightedPolicy: RoutingPolicy = {
  name: 'weighted',
  order(providers, _model, info) {
    const left = [...providers];
    const ordered: Provider[] = [];
    while (left.length > 0) {
      const total = left.reduce((s, p) => s + p.spec.weight, 0);
      let r = info.random() * total;
      let i = 0;
      while (i < left.length - 1 && r >= left[i]!.spec.weight) {
        r -= left[i]!.spec.weight;
        i++;
      }
      ordered.push(left.splice(i, 1)[0]!);
    }
    return ordered;
  },
};

/** By the provider's own price for the model (prompt + completion per token); unpriced last; ties by priority. */
export const cheapestPolicy: RoutingPolicy = {
  name: 'cheapest',
  order: (providers, model) =>
    [...providers].sort((a, b) => a.priceScore(model) - b.priceScore(model) || byPriority(a, b)),
};

/** By the moving average of the time to the response head; unmeasured first (so they get measured). */
export const latencyPolicy: RoutingPolicy = {
  name: 'latency',
  order: (providers) =>
    [...providers].sort((a, b) => (a.ttfbMs ?? -1) - (b.ttfbMs ?? -1) || byPriority(a, b)),
};

export const BUILT_IN_POLICIES: readonly RoutingPolicy[] = [
  priorityPolicy,
  weightedPolicy,
  cheapestPolicy,
  latencyPolicy,
];

export const POLICY_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/i;
