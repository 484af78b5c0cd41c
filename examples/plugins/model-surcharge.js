// A pricing policy for the gateway's plugin kit (docs/plugins.md): a per-model surcharge, or discount, in
// percent of the node's price, and optionally a fixed fee in msats per call.
//
//   PIPELINE=auth,rate-limit,./examples/plugins/model-surcharge.js,reserve,relay,meter,settle,change-token
//   PIPELINE_CONFIG=./pipeline.json   {"./examples/plugins/model-surcharge.js": {"percent": {"gpt-4o": 20}, "fee_msat": 0}}
//
// List it before `reserve`: the adjustment applies to the reservation and to the charge. It uses no service, so it
// exports no `needs` (it is handed none).

/** @type {import('prepaid-model-gateway/plugin').PluginFactory} */
export default function modelSurcharge(options = {}) {
  const rawPercent = options.percent ?? {};
  const feeMsat = options.fee_msat ?? 0;
  if (typeof rawPercent !== 'object' || rawPercent === null || Array.isArray(rawPercent)) {
    throw new Error('model-surcharge: percent must map model ids to integers');
  }
  /** @type {Record<string, number>} model id → percent */
  const percent = {};
  for (const [model, p] of Object.entries(rawPercent)) {
    if (typeof p !== 'number' || !Number.isInteger(p) || p < -100 || p > 10_000) {
      throw new Error(`model-surcharge: percent["${model}"] must be an integer from -100 to 10000`);
    }
    percent[model] = p;
  }
  if (typeof feeMsat !== 'number' || !Number.isSafeInteger(feeMsat) || feeMsat < 0)
    throw new Error('model-surcharge: fee_msat must be an integer ≥ 0');
  for (const k of Object.keys(options)) {
    if (k !== 'percent' && k !== 'fee_msat') throw new Error(`model-surcharge: unknown option "${k}"`);
  }
  return {
    name: 'model-surcharge',
    onRequest(ctx) {
      const p = ctx.model === undefined ? undefined : percent[ctx.model];
      if (p === undefined && feeMsat === 0) return;
      ctx.adjustPrice({ multiplierPpm: (100 + (p ?? 0)) * 10_000, addMsat: feeMsat });
    },
  };
}
