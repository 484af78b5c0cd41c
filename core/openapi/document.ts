/**
 * Loads `openapi/openapi.yaml`, the single source of truth for request and response shapes, once per
 * process. The file is found relative to the project root (the nearest folder above this module holding
 * package.json), so the same code works from `core/` under tsx/vitest and from `dist/core/` when built.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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
 * The parsed document, read once per process and cached. Callers MUST NOT mutate it (it is shared); the
 * validators and the docs pages derive their own copies.
 *
 * Parsing the YAML (270 KB) takes about 0.23 s of CPU, JSON.parse of the same document about 2 ms: the parsed
 * document is also kept on disk as JSON, named by the YAML's SHA-256, in the project's own
 * `node_modules/.cache/prepaid-gateway/` (the project's user owns it, as the tools' caches there; never a shared
 * temporary folder, where another user could plant a document). A start whose YAML is unchanged reads that;
 * an edited YAML has another name and is parsed. A cache that cannot be written (a read-only install) or read
 * (damaged) only costs the parse.
 */
export function loadOpenApiDocument(): OpenApiDocument {
  cached ??= readOpenApiDocument(
    openApiYamlPath(),
    join(projectRoot(), 'node_modules', '.cache', 'prepaid-gateway'),
  ).doc;
  return cached;
}

/** The document at `yamlPath`, from its JSON copy in `cacheDir` when one is there (see loadOpenApiDocument). */
export function readOpenApiDocument(
  yamlPath: string,
  cacheDir: string,
): { doc: OpenApiDocument; from: 'cache' | 'yaml' } {
  const text = readFileSync(yamlPath, 'utf8');
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 32);
  const file = join(cacheDir, `openapi-${digest}.json`);
  try {
    const doc: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof doc === 'object' && doc !== null && 'openapi' in doc && 'paths' in doc)
      return { doc: doc as OpenApiDocument, from: 'cache' };
  } catch {
    // Not there yet, or damaged: parsed below (and written again).
  }
  const doc = parseOpenApiYaml(text);
  try {
    // Written whole under another name, then renamed: a concurrent start reads no file or all of it.
    mkdirSync(cacheDir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(doc));
    renameSync(tmp, file);
  } catch {
    // A read-only install: every start parses.
  }
  return { doc, from: 'yaml' };
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

/** Every operation of the document (by default the project's), in document order. */
export function listOperations(doc: OpenApiDocument = loadOpenApiDocument()): OperationRef[] {
  const out: OperationRef[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method] as { operationId?: string } | undefined;
      if (op !== undefined) out.push({ method, path, operationId: op.operationId });
    }
  }
  return out;
}
