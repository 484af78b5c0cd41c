/**
 * The plugin contract: the public API for plugin authors. Modelled on Envoy's HTTP filters (request hooks
 * that return a status, response hooks by direction, a final hook that always runs) and undici's dispatch
 * handlers (head, data, end, error).
 *
 * A plugin file in `plugins/` exports a factory `(options, services) => Plugin` that validates its options
 * ONCE (throwing `ConfigError` on bad options) and returns an object with only the hooks it needs; a missing
 * hook is a pass-through. Beside it, the plugin declares the services it uses (`PluginNeeds`); the registry
 * (plugins/index.ts) hands the factory those alone. The pipeline is an ordered list of plugins from
 * configuration (`PIPELINE`).
 *
 * Order of events for one request (see core/pipeline.ts):
 *   onRequest (each plugin, in order) → onDispatch (the relay stage attaches `ctx.upstream`) →
 *   onResponseHead (in order) → onResponseChunk (in order, per chunk) → onResponseEnd (in order) →
 *   onFinally (every plugin, exactly once).
 * On an error anywhere: onError (every plugin that has it, in order), then the error envelope is sent,
 * then onFinally. On a client disconnect: no more hooks except onFinally (`ctx.outcome === 'aborted'`).
 */

import type { RequestContext } from './context.js';
import type { GatewayError } from './errors.js';
import type { ServiceName, ServiceTypes } from './service-types.js';

// The rest of the plugin kit's types (package export `prepaid-model-gateway/plugin`; see docs/plugins.md).
export type { PriceAdjustment, ProviderPreference, RequestContext } from './context.js';
export type { Provider, Providers, RoutingInfo, RoutingPolicy } from './providers/types.js';
// The services a plugin may name in its needs (core/service-types.ts), and each one's type.
export type { ServiceName, ServiceTypes } from './service-types.js';

/** What `onRequest` returns: go on with the next plugin, or stop (only after having answered). */
export const HookStatus = { Continue: 'continue', Stop: 'stop' } as const;
export type HookStatus = (typeof HookStatus)[keyof typeof HookStatus];

/** The response head as the response-head hooks see it (the same object as `ctx.response`). */
export interface ResponseHead {
  status: number;
  headers: Record<string, string | string[]>;
}

export interface Plugin {
  /** Unique within a pipeline; used in logs and traces. */
  readonly name: string;

  /**
   * Names of the stages that MUST be listed before this one (it reads what they publish). The pipeline refuses
   * to start when one is missing or listed after it, so a wrong `PIPELINE` fails at start, not per request.
   */
  readonly after?: readonly string[];

  /**
   * Runs in pipeline order before the upstream call. MUST return `Continue` (or nothing) to go on, or
   * `Stop` only after having answered with `ctx.respond(...)`; to fail, throw a `GatewayError`. MAY
   * return a promise (the runner only awaits when one is returned). MAY edit `ctx.body` and then MUST call
   * `ctx.markBodyModified()`. MUST NOT write to the client directly.
   */
  // `void` so that a hook with a bare `return;` (or none) type-checks: nothing returned means Continue.
  // biome-ignore lint/suspicious/noConfusingVoidType: an async hook with a bare `return;` is a Promise<void>.
  onRequest?(ctx: RequestContext): HookStatus | undefined | void | Promise<HookStatus | undefined | void>;

  /**
   * The upstream call: runs once, after EVERY plugin's `onRequest` (also those listed after this plugin, e.g. a
   * response-side stage that shapes the request), unless a request hook answered. MUST set `ctx.upstream` or
   * throw a `GatewayError`. At most one plugin of a pipeline has it (the relay); the pipeline refuses a second.
   */
  onDispatch?(ctx: RequestContext): void | Promise<void>;

  /**
   * Runs in order once the upstream response head is known. MAY edit `head.status`/`head.headers` and set
   * `ctx.bufferResponse` (hold the body until the end hooks ran) or `ctx.holdSseDone`.
   */
  onResponseHead?(ctx: RequestContext, head: ResponseHead): void | Promise<void>;

  /**
   * The hot path: runs for every body chunk, in order. MUST be synchronous (an `async` function is refused when
   * the pipeline is built) and SHOULD NOT allocate. Return
   * `undefined` to pass the chunk on unchanged, a replacement to pass that on instead, or `null` to drop it.
   * MUST NOT keep a reference to the chunk past the call unless it copies it (the buffer may be reused).
   */
  onResponseChunk?(ctx: RequestContext, chunk: Uint8Array): Uint8Array | null | undefined;

  /**
   * Runs in order after the last chunk, before the response ends. MAY append bytes with
   * `ctx.appendToBody(...)`; in buffered mode MAY also edit `ctx.response.headers`.
   */
  onResponseEnd?(ctx: RequestContext): void | Promise<void>;

  /**
   * Runs in order when the request fails (a thrown error anywhere, an upstream failure). MAY add headers to
   * `ctx.response.headers` (they are sent with the error envelope). MUST NOT throw (a throw is logged).
   */
  onError?(ctx: RequestContext, err: GatewayError): void | Promise<void>;

  /**
   * Runs exactly once per request on every plugin that has it, whatever happened (success, error, client
   * abort, upstream failure), after the response ended. The place to release what `onRequest` took (e.g.
   * an unsettled reservation). MUST NOT throw (a throw is logged).
   */
  onFinally?(ctx: RequestContext): void | Promise<void>;

  /**
   * Runs once when the gateway shuts down, after every request in flight ended (plugins in reverse pipeline
   * order). The place to finish background work the plugin owns (e.g. settlement retries) within `graceMs`.
   * A close that has not finished SHUTDOWN_STEP_MS after `graceMs` is left behind (core/shutdown.ts). A throw
   * (or rejection) is logged and means work was left unfinished: the process then exits 1.
   */
  close?(graceMs: number): void | Promise<void>;
}

/**
 * The services a plugin uses, by name (`ServiceName`: `config`, `log`, `providers`, `catalog`, `ledger`, `wallet`,
 * `pricing` …; `ServiceTypes` gives each one's type). A built-in stage exports it beside its factory; a module
 * plugin exports it as `needs`. The registry hands the factory these services alone (no other name is set) and
 * checks the declaration when the pipeline is built: a name that is no service, or a required service this
 * gateway has not built, stops the start with a `ConfigError` naming the plugin and the service.
 */
export interface PluginNeeds {
  /** Services the plugin cannot work without: always present in what it is handed. */
  readonly required?: readonly ServiceName[];
  /**
   * Services it uses when this gateway has them (`nodes` only when the providers file names a paid node, `wallet`
   * only with CASHU_MINTS …): present in what it is handed when built, absent otherwise.
   */
  readonly optional?: readonly ServiceName[];
}

type Listed<L> = L extends readonly (infer N extends ServiceName)[] ? N : never;
type RequiredOf<D> = D extends { readonly required: infer L } ? Listed<L> : never;
type OptionalOf<D> = D extends { readonly optional: infer L } ? Listed<L> : never;

/** What a plugin that declared `D` is handed: its required services, and its optional ones when built. */
export type GrantedServices<D extends PluginNeeds> = {
  readonly [K in RequiredOf<D>]: ServiceTypes[K];
} & { readonly [K in OptionalOf<D>]?: ServiceTypes[K] };

/** No services: what a plugin that declares nothing is handed. */
type NoNeeds = Record<never, never>;

/**
 * A plugin module's factory: validates `options` once, returns the plugin. Its parameter type names the services
 * it declared (`PluginFactory<typeof needs>`), so using one it did not declare does not type-check.
 */
// `in`: two factories compare by their declarations (one declaring more needs cannot pass for one declaring
// less). TypeScript cannot measure this through the conditional types of `GrantedServices` and would otherwise
// take any factory for any other.
export type PluginFactory<in D extends PluginNeeds = NoNeeds> = (
  options: Record<string, unknown> | undefined,
  services: GrantedServices<D>,
) => Plugin;
