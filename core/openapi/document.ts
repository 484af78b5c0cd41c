/**
 * Loads `openapi/openapi.yaml`, the single source of truth for request and response shapes, once per
 * process. The file is found relative to the project root (the nearest folder above this module holding
 * package.json), so the same code works from `core/` under tsx/vitest and from `dist/core/` when built.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** The parts of an OpenAPI 3.0 document this module reads; everything else is passed through untouched. */
export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown>; [k: string]: unknown };
  [k: string]: unknown;
}

/** The HTTP methods an OpenAPI path item may hold (other keys are `parameters`, `summary`, …). */
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

let root: string | undefined;
let cached: OpenApiDocument | undefined;

/** The project root: the nearest ancestor of this module's folder that holds package.json. */
export function projectRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  // Bounded walk: a file system has far fewer than 64 levels between a module and its package root.
  for (let i = 0; i < 64; i++) {
    if (existsSync(join(dir, 'package.json'))) {
      root = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error('openapi: no package.json above ' + fileURLToPath(import.meta.url));
}

/** Absolute path of `openapi/openapi.yaml`. */
export function openApiYamlPath(): string {
  return join(projectRoot(), 'openapi', 'openapi.yaml');
}

/** Parses an OpenAPI YAML text; throws when it is not an object with `openapi` and `paths`. */
export function parseOpenApiYaml(text: string): OpenApiDocument {
  const doc: unknown = parse(text);
  if (typeof doc !== 'object' || doc === null || !('openapi' in doc) || !('paths' in doc)) {
    throw new Error('openapi: the document has no `openapi` or `paths` key');
  }
  return doc as OpenApiDocument;
}

/**
 * The parsed document, read once and cached. Callers MUST NOT mutate it (it is shared); the validators and
 * the docs pages derive their own copies.
 */
export function loadOpenApiDocument(): OpenApiDocument {
  if (cached === undefined) cached = parseOpenApiYaml(readFileSync(openApiYamlPath(), 'utf8'));
  return cached;
}

/** Every error code the document declares, from `components.schemas.ErrorCode.enum`. */
export function documentedErrorCodes(): string[] {
  const schema = loadOpenApiDocument().components?.schemas?.ErrorCode as { enum?: unknown } | undefined;
  if (!Array.isArray(schema?.enum)) return [];
  return schema.enum.filter((c): c is string => typeof c === 'string');
}

/** One documented operation: method (lower case), path template and operationId. */
export interface OperationRef {
  method: string;
  path: string;
  operationId: string | undefined;
}

/** Every operation of the document, in document order. */
export function listOperations(): OperationRef[] {
  const out: OperationRef[] = [];
  for (const [path, item] of Object.entries(loadOpenApiDocument().paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method] as { operationId?: string } | undefined;
      if (op !== undefined) out.push({ method, path, operationId: op.operationId });
    }
  }
  return out;
}
