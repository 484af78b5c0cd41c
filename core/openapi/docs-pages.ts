/**
 * The documentation pages: `/openapi.json` (the yaml as JSON), `/docs` (Swagger UI) and `/redoc` (ReDoc).
 * Assets come from the installed `swagger-ui-dist` and `redoc` packages, never from a CDN, so the pages
 * work offline and under a strict CSP (no inline script: the Swagger UI initializer is its own file).
 * Only a fixed list of asset names is served, so no request path ever reaches the file system.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { loadOpenApiDocument } from './document.js';

/** A ready-to-send answer: the HTTP layer copies it to the wire as is. */
export interface DocsResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

const require = createRequire(import.meta.url);
const CACHE_ASSETS = 'public, max-age=86400';
/**
 * The pages load nothing from elsewhere: ReDoc always renders a footer logo from cdn.redoc.ly (no option
 * turns it off) and the CSP stops that request (the logo hides itself on error). Inline styles are needed
 * by both UIs (styled-components, React style props); ReDoc's search runs in a blob: worker.
 */
const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'self'; " +
  "base-uri 'none'; form-action 'self'";
const CACHE_PAGES = 'no-cache';

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

/** Served path → [package, file inside it, content type]. */
const ASSETS: Record<string, readonly [string, string, string]> = {
  '/docs/swagger-ui.css': ['swagger-ui-dist', 'swagger-ui.css', 'text/css; charset=utf-8'],
  '/docs/index.css': ['swagger-ui-dist', 'index.css', 'text/css; charset=utf-8'],
  '/docs/swagger-ui-bundle.js': ['swagger-ui-dist', 'swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  '/docs/swagger-ui-standalone-preset.js': [
    'swagger-ui-dist',
    'swagger-ui-standalone-preset.js',
    'text/javascript; charset=utf-8',
  ],
  '/docs/favicon-32x32.png': ['swagger-ui-dist', 'favicon-32x32.png', 'image/png'],
  '/docs/favicon-16x16.png': ['swagger-ui-dist', 'favicon-16x16.png', 'image/png'],
  '/docs/oauth2-redirect.html': ['swagger-ui-dist', 'oauth2-redirect.html', 'text/html; charset=utf-8'],
  '/docs/oauth2-redirect.js': ['swagger-ui-dist', 'oauth2-redirect.js', 'text/javascript; charset=utf-8'],
  '/redoc/redoc.standalone.js': ['redoc', 'bundles/redoc.standalone.js', 'text/javascript; charset=utf-8'],
};

const SWAGGER_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Prepaid model gateway API — Swagger UI</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css">
    <link rel="stylesheet" type="text/css" href="/docs/index.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="/docs/swagger-initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

const SWAGGER_INIT = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    validatorUrl: null, // no badge fetched from validator.swagger.io
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
  });
};
`;

const REDOC_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Prepaid model gateway API — ReDoc</title>
    <style>body { margin: 0; padding: 0; }</style>
  </head>
  <body>
    <redoc spec-url="/openapi.json"></redoc>
    <script src="/redoc/redoc.standalone.js"></script>
  </body>
</html>
`;

let specJson: string | undefined;
const files = new Map<string, Buffer>();

function ok(contentType: string, body: Buffer | string, cacheControl: string): DocsResponse {
  const headers: Record<string, string> = {
    'content-type': contentType,
    'cache-control': cacheControl,
    'x-content-type-options': 'nosniff',
  };
  if (contentType.startsWith('text/html')) headers['content-security-policy'] = PAGE_CSP;
  return { status: 200, headers, body };
}

function asset(path: string): DocsResponse | undefined {
  const entry = ASSETS[path];
  if (entry === undefined) return undefined;
  const [pkg, file, type] = entry;
  let body = files.get(path);
  if (body === undefined) {
    body = readFileSync(join(packageDir(pkg), file));
    files.set(path, body); // bounded: at most one entry per name in ASSETS
  }
  return ok(type, body, CACHE_ASSETS);
}

/**
 * The answer for a documentation path, or undefined when `path` is not one (the caller then routes it on).
 * `path` is the request path; a query string, if passed, is ignored. Serves `/openapi.json`, `/docs`,
 * `/docs/` and the Swagger UI assets under `/docs/`, `/redoc`, `/redoc/` and `/redoc/redoc.standalone.js`.
 */
export function serveDocs(path: string): DocsResponse | undefined {
  const q = path.indexOf('?');
  const p = q === -1 ? path : path.slice(0, q);
  switch (p) {
    case '/openapi.json':
      specJson ??= JSON.stringify(loadOpenApiDocument());
      return ok('application/json; charset=utf-8', specJson, CACHE_PAGES);
    case '/docs':
    case '/docs/':
      return ok('text/html; charset=utf-8', SWAGGER_HTML, CACHE_PAGES);
    case '/docs/swagger-initializer.js':
      return ok('text/javascript; charset=utf-8', SWAGGER_INIT, CACHE_PAGES);
    case '/redoc':
    case '/redoc/':
      return ok('text/html; charset=utf-8', REDOC_HTML, CACHE_PAGES);
    default:
      return asset(p);
  }
}
