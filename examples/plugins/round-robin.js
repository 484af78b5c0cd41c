// A routing policy for the gateway's plugin kit (docs/plugins.md): registers a named policy, `round-robin`,
// that takes a model's providers in turn (the next call starts one further down the list; the rest follow in
// order as failover). Name it like a built-in one:
//
//   PIPELINE=auth,rate-limit,reserve,./examples/plugins/round-robin.js,relay,meter,settle,change-token
//   ROUTING_POLICY=round-robin                       (every model), or in the providers file:
//   "routing": {"gpt-4o-mini": "round-robin"}       (one model)
//
// Options: {"name": "round-robin"} to register it under another name. The plugin has no hooks: registering the
// policy is all it does (at start, from its factory).

/**
 * The services it uses: the gateway hands it these alone (`services.providers`), checked at start.
 * @satisfies {import('prepaid-model-gateway/plugin').PluginNeeds}
 */
export const needs = { required: ['providers'] };

/** @type {import('prepaid-model-gateway/plugin').PluginFactory<typeof needs>} */
export default function roundRobin(options = {}, services) {
  for (const k of Object.keys(options)) {
    if (k !== 'name') throw new Error(`round-robin: unknown option "${k}"`);
  }
  const name = options.name ?? 'round-robin';
  if (typeof name !== 'string') throw new Error('round-robin: name must be a string');
  /** Next start position per model. */
  const next = new Map();
  /** @type {import('prepaid-model-gateway/plugin').RoutingPolicy} */
  const policy = {
    name,
    order(providers, model) {
      const key = model ?? '';
      const start = (next.get(key) ?? 0) % providers.length;
      next.set(key, start + 1);
      return [...providers.slice(start), ...providers.slice(0, start)];
    },
  };
  services.providers.registerPolicy(policy);
  return { name: `routing-policy:${name}` };
}
