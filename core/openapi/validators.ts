/**
 * Request-body validators from `openapi/openapi.yaml`, so the document is the one source of the request schemas.
 * OpenAPI 3.0 schemas are a dialect of JSON Schema; `toJsonSchema` translates the differences (`nullable`,
 * boolean `exclusiveMinimum/Maximum`, `$ref` targets, annotation keys ajv rejects in strict mode).
 *
 * The validators are ajv's, compiled ahead of time: `npm run gen` writes every documented operation's validator
 * as code into `generated/validators.cjs` (ajv's standalone code, from `validatorsModuleSource` below; `npm run
 * gen:check` fails when it is out of date with the document), and a process loads that module on the first lookup.
 * Compiling them at run time cost a start ≈ 0.5 s of CPU (the warm-up compiled every operation) and a first
 * request its compile. An operation missing from that module (a document edited without `npm run gen`) is
 * compiled at run time with the same options, as before. Validators are cached for the process.
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { GatewayError } from '../errors.js';
import { listOperations, loadOpenApiDocument, type OpenApiDocument } from './document.js';

// ajv and ajv-formats are CommonJS; loaded only when something is compiled (never, with an up-to-date module).
const requireCjs = createRequire(import.meta.url);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const COMPONENTS_ID = 'openapi-components';
/** OpenAPI-only annotation keys that JSON Schema (and ajv's strict mode) does not know. */
const DROPPED_KEYS = new Set(['nullable', 'example', 'discriminator', 'xml', 'externalDocs']);
/** At most this many ajv errors are copied into `details.errors` (bounded response size). */
const MAX_REPORTED_ERRORS = 20;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Translates one OpenAPI 3.0 schema object into a JSON Schema (draft-07) object ajv accepts. */
export function toJsonSchema(schema: Json): Json {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED_KEYS.has(key) || key.startsWith('x-')) continue;
    switch (key) {
      case '$ref':
        out.$ref =
          typeof value === 'string'
            ? value.replace(/^#\/components\/schemas\//, `${COMPONENTS_ID}#/definitions/`)
            : value;
        break;
      case 'properties':
      case 'patternProperties':
        // Keys here are property names (one is literally `x-node-cost`), values are schemas.
        out[key] = isObject(value)
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSchema(v)]))
          : value;
        break;
      case 'items':
      case 'additionalProperties':
      case 'not':
        out[key] = toJsonSchema(value);
        break;
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        out[key] = Array.isArray(value) ? value.map(toJsonSchema) : value;
        break;
      default:
        out[key] = value;
    }
  }
  // OpenAPI 3.0 boolean exclusive bounds become JSON Schema numeric ones.
  if (out.exclusiveMinimum === true && typeof out.minimum === 'number') {
    out.exclusiveMinimum = out.minimum;
    delete out.minimum;
  } else if (typeof out.exclusiveMinimum === 'boolean') delete out.exclusiveMinimum;
  if (out.exclusiveMaximum === true && typeof out.maximum === 'number') {
    out.exclusiveMaximum = out.maximum;
    delete out.maximum;
  } else if (typeof out.exclusiveMaximum === 'boolean') delete out.exclusiveMaximum;
  if (schema.nullable === true) return withNull(out);
  return out;
}

function withNull(s: JsonObject): JsonObject {
  if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...s.enum, null];
  if (typeof s.type === 'string') return { ...s, type: [s.type, 'null'] };
  if (Array.isArray(s.type)) return s.type.includes('null') ? s : { ...s, type: [...s.type, 'null'] };
  // No type keyword ($ref, allOf, …): null is a separate alternative.
  return { anyOf: [s, { type: 'null' }] };
}

/**
 * An ajv with the options every validator is compiled with, the document's component schemas added.
 * `source`: keep each validator's code (for `validatorsModuleSource`).
 */
function newAjv(doc: OpenApiDocument, source: boolean): Ajv {
  const { Ajv: AjvClass } = requireCjs('ajv') as typeof import('ajv');
  // ajv-formats ships CommonJS with `exports.default`.
  const formats = requireCjs('ajv-formats') as { default: (ajv: Ajv) => Ajv };
  const a = new AjvClass({
    allErrors: false, // stop at the first failure: cheaper and not exploitable by huge invalid bodies
    allowUnionTypes: true,
    coerceTypes: false,
    useDefaults: false, // bodies are relayed as sent; defaults are the upstream's business
    strictSchema: true, // unknown keywords in the yaml are a bug: fail at compile time
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    ...(source ? { code: { source: true, lines: true } } : {}),
  });
  formats.default(a);
  const schemas = (doc.components?.schemas ?? {}) as JsonObject;
  const definitions = Object.fromEntries(Object.entries(schemas).map(([k, v]) => [k, toJsonSchema(v)]));
  a.addSchema({ $id: COMPONENTS_ID, definitions } as JsonObject);
  return a;
}

let ajv: Ajv | undefined;
const cache = new Map<string, ((body: unknown) => void) | null>();
/** `generated/validators.cjs`'s exports (precompiledModule). */
let precompiled: Record<string, ValidateFunction> | undefined;

function getAjv(): Ajv {
  ajv ??= newAjv(loadOpenApiDocument(), false);
  return ajv;
}

/** `generated/validators.cjs`'s validators by operation key, loaded once; `{}` when it cannot be loaded. */
function precompiledModule(): Record<string, ValidateFunction> {
  if (precompiled === undefined) {
    try {
      precompiled = requireCjs('./generated/validators.cjs') as Record<string, ValidateFunction>;
    } catch {
      precompiled = {}; // compiled at run time instead
    }
  }
  return precompiled;
}

/**
 * The operations `generated/validators.cjs` holds a validator for (`POST /v1/chat/completions`, …): with an
 * up-to-date module, every documented operation with a JSON body, so none is compiled at run time.
 */
export function precompiledOperations(): string[] {
  return Object.keys(precompiledModule());
}

/** `spec`'s validator compiled now, with the options and translation the generated module was compiled with. */
function compileAtRunTime(spec: BodySpec): ValidateFunction {
  return getAjv().compile(toJsonSchema(spec.schema) as JsonObject);
}

/**
 * A validator compiled at run time from the document (the fallback of an operation missing from the generated
 * module), not cached: tests compare it with the precompiled one.
 */
export function compileRequestValidator(
  method: string,
  pathTemplate: string,
): ((body: unknown) => void) | undefined {
  const spec = requestBodyOf(loadOpenApiDocument(), method, pathTemplate);
  return spec === undefined ? undefined : wrapValidator(spec, compileAtRunTime(spec));
}

/** `POST /v1/chat/completions`: an operation's key in the cache and in the generated module. */
function operationKey(method: string, pathTemplate: string): string {
  return method.toUpperCase() + ' ' + pathTemplate;
}

const GENERATED_HEADER =
  '// generated — do not edit; run npm run gen (scripts/gen-openapi-types.ts from openapi/openapi.yaml):\n' +
  "// every documented operation's request-body validator, ajv standalone code (core/openapi/validators.ts)\n";

/**
 * The source of `generated/validators.cjs` for `doc`: a CommonJS module exporting each operation's validator
 * (those with a JSON request body) under its key, compiled with the options and translation used at run time.
 * Deterministic for a given document and ajv version.
 */
export async function validatorsModuleSource(doc: OpenApiDocument): Promise<string> {
  const a = newAjv(doc, true);
  const refs: Record<string, string> = {};
  for (const op of listOperations(doc)) {
    const spec = requestBodyOf(doc, op.method, op.path);
    if (spec === undefined) continue;
    // An id without a scheme or a slash, so that the schema's relative `$ref`s resolve as at run time.
    const id = `operation-${Object.keys(refs).length}`;
    a.addSchema(toJsonSchema(spec.schema) as JsonObject, id);
    refs[operationKey(op.method, op.path)] = id;
  }
  const standalone = requireCjs('ajv/dist/standalone') as {
    default: (a: Ajv, refs: Record<string, string>) => string;
  };
  return GENERATED_HEADER + standalone.default(a, refs) + '\n';
}

interface BodySpec {
  schema: Json;
  required: boolean;
}

function requestBodyOf(doc: OpenApiDocument, method: string, pathTemplate: string): BodySpec | undefined {
  const op = doc.paths[pathTemplate]?.[method.toLowerCase()] as JsonObject | undefined;
  if (!isObject(op)) return undefined;
  let body = op.requestBody;
  if (isObject(body) && typeof body.$ref === 'string') {
    const name = body.$ref.replace(/^#\/components\/requestBodies\//, '');
    body = (doc.components?.requestBodies as JsonObject | undefined)?.[name] ?? null;
  }
  if (!isObject(body) || !isObject(body.content)) return undefined;
  const media = body.content['application/json'];
  if (!isObject(media) || media.schema === undefined) return undefined;
  return { schema: media.schema, required: body.required === true };
}

/** `/messages/0/content` → `messages[0].content`; the empty pointer is the body itself. */
function fieldPath(pointer: string, child?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  return out === '' ? 'body' : out;
}

/** ajv's `params.type` is a name or a comma-joined list of names. */
function typeNames(t: unknown): string[] {
  return String(t).split(',');
}

interface FieldError {
  field: string;
  message: string;
}

function describe(e: ErrorObject): FieldError {
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'required') {
    return { field: fieldPath(e.instancePath, String(p.missingProperty)), message: 'is required' };
  }
  if (e.keyword === 'additionalProperties') {
    return { field: fieldPath(e.instancePath, String(p.additionalProperty)), message: 'is not allowed' };
  }
  if (e.keyword === 'type') {
    return { field: fieldPath(e.instancePath), message: `must be ${typeNames(p.type).join(' or ')}` };
  }
  if (e.keyword === 'enum' && Array.isArray(p.allowedValues)) {
    return { field: fieldPath(e.instancePath), message: `must be one of ${p.allowedValues.join(', ')}` };
  }
  return { field: fieldPath(e.instancePath), message: e.message ?? 'is invalid' };
}

/**
 * The one error to name in the message. For `anyOf`/`oneOf` failures whose branches all failed on type at
 * the same place, the types are merged ("must be string or array"); otherwise the most specific (deepest)
 * branch error wins, since it points at the field the caller got wrong.
 */
function primary(errors: ErrorObject[]): FieldError {
  const last = errors[errors.length - 1]!;
  if (last.keyword !== 'anyOf' && last.keyword !== 'oneOf') return describe(errors[0]!);
  const branches = errors.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  const atSame = branches.filter((e) => e.instancePath === last.instancePath);
  if (atSame.length > 0 && atSame.length === branches.length && atSame.every((e) => e.keyword === 'type')) {
    const types = [...new Set(atSame.flatMap((e) => typeNames((e.params as { type: unknown }).type)))];
    return { field: fieldPath(last.instancePath), message: `must be ${types.join(' or ')}` };
  }
  const deepest = branches.reduce<ErrorObject | undefined>(
    (best, e) => (best === undefined || e.instancePath.length > best.instancePath.length ? e : best),
    undefined,
  );
  return describe(deepest ?? last);
}

/**
 * The request-body validator of one documented operation, or undefined when the operation is not
 * documented or takes no JSON body. `pathTemplate` is the document's template (`/v1/providers/{provider_name}`).
 * The validator returns normally for a valid body and throws `GatewayError('validation_failed')` otherwise,
 * with a message naming the field (`messages: must be array`) and `details: { field, errors }`.
 */
export function getRequestValidator(
  method: string,
  pathTemplate: string,
): ((body: unknown) => void) | undefined {
  const key = operationKey(method, pathTemplate);
  let entry = cache.get(key);
  if (entry === undefined) {
    const spec = requestBodyOf(loadOpenApiDocument(), method, pathTemplate);
    entry = spec === undefined ? null : makeValidator(spec, key);
    cache.set(key, entry); // bounded: one entry per (method, path) asked for, and callers ask for routes
  }
  return entry ?? undefined;
}

/** How soon the background warm-up looks again while requests are in flight (ms). */
export const WARM_IDLE_RETRY_MS = 5;

/**
 * Compiles validators before the requests that need them: `now` at once (the paid routes: otherwise a process's
 * first paid call parses the document and compiles its schema, 16 ms on a quiet machine), then every other
 * documented operation one per event-loop turn while `busy()` is false (no request in flight), so that no turn
 * holds the loop for long and no request waits behind a compile. Returns a stop for shutdown. A schema that fails
 * to compile in the background is left to its first request, which reports it.
 */
export function warmRequestValidators(
  now: ReadonlyArray<{ method: string; path: string }>,
  busy: () => boolean = () => false,
): () => void {
  for (const r of now) getRequestValidator(r.method, r.path);
  const rest = listOperations();
  let i = 0;
  // Two handles, each cleared by its own function: Node's clearImmediate() given a Timeout takes one from the
  // count of pending immediates and unlinks the Timeout as if it were one. With that count one short, the
  // process's next setImmediate() callback waits for the one after it, and the loop spins (the idle handle stays
  // on while the check phase finds "nothing" to run): seen as Redis commands (ioredis flushes its auto-pipeline on
  // setImmediate) each taking ~85 ms in a test process whose gateway had stopped during the busy wait.
  let immediate: NodeJS.Immediate | undefined;
  let timer: NodeJS.Timeout | undefined;
  const step = (): void => {
    immediate = undefined;
    timer = undefined;
    // Nothing left (or stopped): no more looks, not even at busy().
    if (i >= rest.length) return;
    // Only while no request is in flight: one compile takes milliseconds, and a call whose every hop (body,
    // admission, upstream, settle) queued behind one paid for each (a process's first paid calls took 13-22 ms
    // while the rest compiled, 1.3-3.2 ms without; docs/benchmarks.md). Under steady traffic the rest waits, and a
    // validator not compiled yet is compiled by the first request that needs it, as before the warm-up.
    if (busy()) {
      timer = setTimeout(step, WARM_IDLE_RETRY_MS);
      timer.unref();
      return;
    }
    const op = rest[i++]!;
    try {
      getRequestValidator(op.method, op.path);
    } catch {
      // reported by the request that needs it
    }
    immediate = setImmediate(step);
  };
  immediate = setImmediate(step);
  return () => {
    if (immediate !== undefined) clearImmediate(immediate);
    if (timer !== undefined) clearTimeout(timer);
    immediate = undefined;
    timer = undefined;
    i = rest.length;
  };
}

/** Whether this operation's validator was already looked up and compiled (tests of the warm-up). */
export function validatorCompiled(method: string, pathTemplate: string): boolean {
  return cache.has(operationKey(method, pathTemplate));
}

function makeValidator(spec: BodySpec, key: string): (body: unknown) => void {
  const generated = precompiledModule();
  return wrapValidator(spec, Object.hasOwn(generated, key) ? generated[key]! : compileAtRunTime(spec));
}

function wrapValidator(spec: BodySpec, validate: ValidateFunction): (body: unknown) => void {
  return (body: unknown): void => {
    if (body === undefined) {
      if (!spec.required) return;
      const missing = { field: 'body', message: 'is required' };
      throw failure([missing], missing);
    }
    if (validate(body)) return;
    const errors = validate.errors ?? [];
    const first = errors.length > 0 ? primary(errors) : { field: 'body', message: 'is invalid' };
    throw failure(errors.slice(0, MAX_REPORTED_ERRORS).map(describe), first);
  };
}

function failure(errors: FieldError[], first: FieldError): GatewayError {
  return new GatewayError('validation_failed', {
    message: `${first.field}: ${first.message}`,
    details: { field: first.field, errors },
  });
}
