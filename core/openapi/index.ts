/**
 * The OpenAPI module: `openapi/openapi.yaml` is the single source of the request schemas. It provides
 * - request-body validators compiled from the document (`getRequestValidator`),
 * - the documentation pages `/openapi.json`, `/docs` (Swagger UI) and `/redoc` (`serveDocs`),
 * - the generated TypeScript types of every schema (`npm run gen` writes `generated/types.ts`).
 * The HTTP layer calls the first two; nothing here knows about HTTP engines.
 */
export { serveDocs } from './docs-pages.js';
export {
  documentedErrorCodes,
  listOperations,
  loadOpenApiDocument,
  openApiYamlPath,
  projectRoot,
} from './document.js';
export { getRequestValidator, toJsonSchema, warmRequestValidators } from './validators.js';
