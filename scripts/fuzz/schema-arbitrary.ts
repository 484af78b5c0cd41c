import fc from 'fast-check';

/**
 * fast-check arbitraries for the request bodies `openapi/openapi.yaml` documents: a value that follows the
 * schema (types, enums, required properties, bounds) most of the time, so requests get past validation and
 * reach the handlers, with the hostile variants mixed in by the caller. Covers the subset of OpenAPI 3.0
 * schema keywords the document uses: $ref to components.schemas, type, properties, required, items, enum,
 * minimum/maximum, minLength/maxLength, oneOf/anyOf/allOf, nullable.
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 4;

export function schemaArbitrary(schema: unknown, components: Record<string, unknown>): fc.Arbitrary<unknown> {
  return build(schema as Schema, components, 0);
}

function resolve(schema: Schema, components: Record<string, unknown>): Schema {
  let s = schema;
  for (let i = 0; i < 16 && typeof s?.$ref === 'string'; i++) {
    const name = (s.$ref as string).replace('#/components/schemas/', '');
    s = (components[name] ?? {}) as Schema;
  }
  return s ?? {};
}

function build(raw: Schema, components: Record<string, unknown>, depth: number): fc.Arbitrary<unknown> {
  const s = resolve(raw, components);
  const base = buildType(s, components, depth);
  return s.nullable === true ? fc.oneof({ weight: 4, arbitrary: base }, fc.constant(null)) : base;
}

function buildType(s: Schema, components: Record<string, unknown>, depth: number): fc.Arbitrary<unknown> {
  if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...(s.enum as unknown[]));
  const alts = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (Array.isArray(alts) && alts.length > 0) {
    return fc.oneof(...alts.map((a) => build(a, components, depth + 1)));
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0) {
    const parts = (s.allOf as Schema[]).map((a) => build(a, components, depth + 1));
    return fc
      .tuple(...parts)
      .map((vals) =>
        vals.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v))
          ? Object.assign({}, ...(vals as object[]))
          : vals[0],
      );
  }
  const type = s.type ?? (s.properties ? 'object' : undefined);
  switch (type) {
    case 'object':
      return objectArb(s, components, depth);
    case 'array': {
      if (depth >= MAX_DEPTH) return fc.constant([]);
      const items = build((s.items ?? {}) as Schema, components, depth + 1);
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      return fc.array(items, {
        minLength: min,
        maxLength: Math.max(min, Math.min(3, Number(s.maxItems ?? 3))),
      });
    }
    case 'string': {
      const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
      const maxLength = Math.max(minLength, Math.min(40, Number(s.maxLength ?? 40)));
      return fc.string({ minLength, maxLength });
    }
    case 'integer': {
      const min = typeof s.minimum === 'number' ? s.minimum : -1_000;
      const max = typeof s.maximum === 'number' ? s.maximum : 1_000_000;
      return fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) });
    }
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : -1e6;
      const max = typeof s.maximum === 'number' ? s.maximum : 1e6;
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case 'boolean':
      return fc.boolean();
    default:
      return depth >= MAX_DEPTH ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  }
}

function objectArb(s: Schema, components: Record<string, unknown>, depth: number): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set((s.required ?? []) as string[]);
  if (depth >= MAX_DEPTH) {
    return fc.constant(Object.fromEntries([...required].map((k) => [k, null])));
  }
  const entries = Object.entries(props);
  if (entries.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }));
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of entries) model[k] = build(v, components, depth + 1);
  return fc.record(model, { requiredKeys: entries.map(([k]) => k).filter((k) => required.has(k)) });
}
