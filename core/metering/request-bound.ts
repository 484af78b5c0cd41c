import { GatewayError } from '../errors.js';
import type { HostedTool, HostedTools, TokenEndpoint } from '../pricing/types.js';

/**
 * What a request's body lets the provider bill beyond its own bytes, read before anything is reserved
 * (docs/pricing.md "The bound"): the largest max-tokens field, the output choices (`n`, `best_of`), the
 * server-side tools it declares and the most calls the provider may make to them, and the stored context it
 * refers to. The reserve stage prices these; what cannot be bounded is refused there.
 */

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

const MAX_TOKEN_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const;

/**
 * The caller's completion cap: the LARGEST of `max_tokens`, `max_completion_tokens` and `max_output_tokens`
 * (a provider may read any one of them), or undefined when none is a count.
 */
export function callerMaxTokens(body: unknown): number | undefined {
  const b = obj(body);
  if (b === undefined) return undefined;
  let max: number | undefined;
  for (const f of MAX_TOKEN_FIELDS) {
    const v = b[f];
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && (max === undefined || v > max)) max = v;
  }
  return max;
}

/** The most choices a call may ask for (the OpenAI APIs allow 128 for `n`, 20 for `best_of`). */
const MAX_CHOICES = 128;

/**
 * How many completions the provider generates and bills: chat `n`, completions `max(n, best_of)` (best_of
 * candidates are all billed). 1 for the other APIs. A value that is not an integer from 1 to 128 is refused.
 */
export function outputChoices(body: unknown, endpoint: string): number {
  const b = obj(body);
  if (b === undefined || (endpoint !== 'chat' && endpoint !== 'completions')) return 1;
  let k = 1;
  for (const f of endpoint === 'completions' ? ['n', 'best_of'] : ['n']) {
    const v = b[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > MAX_CHOICES) {
      throw new GatewayError('invalid_request', {
        message: `${f} must be an integer from 1 to ${MAX_CHOICES}`,
      });
    }
    if (v > k) k = v;
  }
  return k;
}

/** Tool `type`s the provider runs itself, by the dimension they are billed in. */
function hostedToolOf(type: string): HostedTool | undefined {
  if (/^web_search/.test(type)) return 'web_search';
  if (type === 'image_generation') return 'image_generation';
  if (type === 'code_interpreter' || /^code_execution/.test(type)) return 'code_interpreter';
  if (type === 'file_search') return 'file_search';
  return undefined;
}

export interface DeclaredTools {
  /** The tools and the bound of their calls; undefined when the call declares none. */
  hosted: HostedTools | undefined;
  /** The body needs the limit written in (`max_tool_calls`, `max_uses`) so the provider keeps to the bound. */
  limit: ((body: Obj) => void) | undefined;
  /**
   * Chat web search (`web_search_options`, OpenRouter's web plugin, `:online`): billed per call without a count
   * in `usage`, so a call that reports none is charged one search.
   */
  searchPerCall: boolean;
}

const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;

/**
 * The server-side tools a body declares: Responses and chat `tools[].type` (web_search*, image_generation,
 * code_interpreter, file_search), Anthropic server tools (`web_search_*`, `code_execution_*`), chat
 * `web_search_options`, OpenRouter's `plugins: [{"id": "web"}]` and a model id ending in `:online`.
 *
 * The calls bound: Responses `max_tool_calls` (all built-in tools together), else `defaultCalls`, written into
 * the body; Anthropic the sum of each server tool's `max_uses` (`defaultCalls` written where absent); chat web
 * search one call (a search model searches once per call).
 */
export function declaredTools(
  body: unknown,
  endpoint: TokenEndpoint,
  model: string,
  defaultCalls: number,
): DeclaredTools {
  const b = obj(body);
  const none: DeclaredTools = { hosted: undefined, limit: undefined, searchPerCall: false };
  if (b === undefined || endpoint === 'embeddings' || endpoint === 'completions') return none;
  const tools: { tool: HostedTool; declaredAs: string }[] = [];
  const anthropicUses: number[] = [];
  let anthropicMissing = false;
  if (Array.isArray(b.tools)) {
    for (const t of b.tools) {
      const type = obj(t)?.type;
      if (typeof type !== 'string') continue;
      const tool = hostedToolOf(type);
      if (tool === undefined) continue;
      tools.push({ tool, declaredAs: type.slice(0, 64) });
      if (endpoint === 'messages') {
        const uses = count(obj(t)?.max_uses);
        if (uses === undefined) anthropicMissing = true;
        anthropicUses.push(uses ?? defaultCalls);
      }
    }
  }
  let searchPerCall = false;
  if (endpoint === 'chat') {
    const plugins = Array.isArray(b.plugins) ? b.plugins : [];
    const declared =
      b.web_search_options !== undefined && b.web_search_options !== null
        ? 'web_search_options'
        : plugins.some((p) => obj(p)?.id === 'web')
          ? 'plugins web'
          : model.endsWith(':online')
            ? 'model :online'
            : undefined;
    if (declared !== undefined) {
      tools.push({ tool: 'web_search', declaredAs: declared });
      searchPerCall = true;
    }
  }
  if (tools.length === 0) return none;
  if (endpoint === 'messages') {
    const calls = anthropicUses.reduce((a, v) => a + v, 0);
    const limit = anthropicMissing
      ? (body: Obj) => {
          for (const t of body.tools as unknown[]) {
            const o = obj(t);
            if (o !== undefined && typeof o.type === 'string' && hostedToolOf(o.type) !== undefined) {
              if (count(o.max_uses) === undefined) o.max_uses = defaultCalls;
            }
          }
        }
      : undefined;
    return { hosted: { tools, calls }, limit, searchPerCall: false };
  }
  if (endpoint === 'responses') {
    const given = count(b.max_tool_calls);
    return {
      hosted: { tools, calls: given ?? defaultCalls },
      limit:
        given === undefined
          ? (body: Obj) => {
              body.max_tool_calls = defaultCalls;
            }
          : undefined,
      searchPerCall: false,
    };
  }
  // Chat: only web search has a per-call form here; a hosted tool in chat `tools` is one call per declaration.
  return { hosted: { tools, calls: tools.length }, limit: undefined, searchPerCall };
}

/** Stored context a Responses call refers to. */
export interface StoredContext {
  /** `previous_response_id`, when set. */
  previousResponseId: string | undefined;
  /** A stored `prompt` id or a `conversation`: context the gateway did not see (named in a refusal). */
  unseen: string | undefined;
}

export function storedContext(body: unknown, endpoint: TokenEndpoint): StoredContext {
  const b = obj(body);
  if (b === undefined || endpoint !== 'responses')
    return { previousResponseId: undefined, unseen: undefined };
  const prev = typeof b.previous_response_id === 'string' ? b.previous_response_id : undefined;
  const conversation = b.conversation;
  const unseen =
    conversation !== undefined && conversation !== null
      ? 'conversation'
      : obj(b.prompt)?.id !== undefined
        ? 'prompt'
        : undefined;
  return { previousResponseId: prev, unseen };
}

/**
 * Every `file_id` string and `file_ids` entry in `body` (content parts, tool resources, code interpreter
 * containers), depth-bounded: the files a call or batch line names, for their ownership and their bound.
 */
export function fileIdsOf(body: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 32 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      if (k === 'file_id' && typeof x === 'string') {
        if (x !== '') out.push(x);
      } else if (k === 'file_ids' && Array.isArray(x)) {
        for (const id of x) if (typeof id === 'string' && id !== '') out.push(id);
      } else walk(x, depth + 1);
    }
  };
  walk(body, 0);
  return out;
}
