import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { loadOpenApiDocument, toJsonSchema } from '../../core/openapi/index.js';

/**
 * Checks a response body against the schema openapi/openapi.yaml documents for that operation and status
 * (the document is the contract; these tests hold the handlers to it). Strict about documented fields and
 * types; extra fields pass where the document allows them.
 */

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

let ajv: Ajv | undefined;
const cache = new Map<string, ValidateFunction>();

function getAjv(): Ajv {
  if (ajv) return ajv;
  const a = new Ajv({ allErrors: true, allowUnionTypes: true, strict: false });
  addFormats(a);
  const schemas = (loadOpenApiDocument().components?.schemas ?? {}) as JsonObject;
  const definitions = Object.fromEntries(Object.entries(schemas).map(([k, v]) => [k, toJsonSchema(v)]));
  a.addSchema({ $id: 'openapi-components', definitions } as JsonObject);
  ajv = a;
  return a;
}

/** The validator of `key`, compiled once from the schema `schemaOf()` finds (it throws when there is none). */
function validatorOf(key: string, schemaOf: () => Json): ValidateFunction {
  let validate = cache.get(key);
  if (!validate) {
    validate = getAjv().compile(toJsonSchema(schemaOf()) as JsonObject);
    cache.set(key, validate);
  }
  return validate;
}

function check(key: string, validate: ValidateFunction, body: unknown): void {
  if (!validate(body)) {
    throw new Error(`${key}: body does not match the document: ${JSON.stringify(validate.errors)}`);
  }
}

/** Throws with ajv's errors unless `body` matches the documented JSON response of `method template status`. */
export function assertDocumented(method: string, template: string, status: number, body: unknown): void {
  const key = `${method} ${template} ${status}`;
  const validate = validatorOf(key, () => {
    const doc = loadOpenApiDocument();
    const op = doc.paths[template]?.[method.toLowerCase()] as JsonObject | undefined;
    let resp = (op?.responses as JsonObject | undefined)?.[String(status)] as JsonObject | undefined;
    // A shared answer (`$ref: "#/components/responses/…"`, the error envelopes) is looked up there.
    const ref = resp?.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/responses/')) {
      const responses = doc.components?.responses as JsonObject | undefined;
      resp = responses?.[ref.slice('#/components/responses/'.length)] as JsonObject | undefined;
    }
    const schema = ((resp?.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined)
      ?.schema;
    if (schema === undefined) throw new Error(`${key}: no JSON response documented`);
    return schema;
  });
  check(key, validate, body);
}

/** Throws with ajv's errors unless `body` matches the component schema `name` of openapi/openapi.yaml. */
export function assertComponent(name: string, body: unknown): void {
  const validate = validatorOf(`#${name}`, () => {
    const schema = (loadOpenApiDocument().components?.schemas as JsonObject | undefined)?.[name];
    if (schema === undefined) throw new Error(`${name}: no such schema in the document`);
    return schema;
  });
  check(name, validate, body);
}
