// A routing policy for the gateway's plugin kit (docs/plugins.md): a client may pin its call to one provider
// with a request header (default `x-provider`), among those the operator allows; others are routed as usual.
// With `strict: true` a pinned call goes only to that provider (no failover to another).
//
//   PIPELINE=auth,rate-limit,reserve,./examples/plugins/pin-provider.js,relay,meter,settle,change-token
//   PIPELINE_CONFIG=./pipeline.json   {"./examples/plugins/pin-provider.js": {"allow": ["openai", "router"]}}

/**
 * The services it uses: the gateway hands it these alone (`services.providers`), checked at start.
 * @satisfies {import('prepaid-model-gateway/plugin').PluginNeeds}
 */
export const needs = { required: ['providers'] };

/** @type {import('prepaid-model-gateway/plugin').PluginFactory<typeof needs>} */
export default function pinProvider(options = {}, services) {
  const rawHeader = options.header ?? 'x-provider';
  if (typeof rawHeader !== 'string') throw new Error('pin-provider: header must be a header name');
  const header = rawHeader.toLowerCase();
  const allow = options.allow ?? services.providers.list.map((p) => p.name);
  if (!Array.isArray(allow) || !allow.every((n) => typeof n === 'string')) {
    throw new Error('pin-provider: allow must be a list of provider names');
  }
  for (const name of allow) {
    if (!services.providers.get(name)) throw new Error(`pin-provider: no provider named "${name}"`);
  }
  const strict = options.strict === true;
  return {
    name: 'pin-provider',
    onRequest(ctx) {
      const wanted = ctx.headers[header];
      if (wanted !== undefined && allow.includes(wanted)) ctx.preferProviders([wanted], { only: strict });
    },
  };
}
