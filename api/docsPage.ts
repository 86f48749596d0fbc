// The API reference page: GET /docs renders the OpenAPI document with Swagger UI (swagger-ui-dist's
// static files, served from node_modules by this API: nothing comes from a CDN). The page is
// documentation, so it and the document it loads (/docs/openapi.json, the same generated document
// as the keyed /openapi.json) need no API key. Its Content-Security-Policy allows only this origin.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { AuthcapError } from '../domain/errors.js';
import type { JsonResponse, Router } from './router.js';

/** Only our own files; `data:` for the icons inlined in swagger-ui.css. No inline script or style. */
export const docsSecurityHeaders: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** Swagger UI's start, as a file of ours (the CSP forbids inline script). */
const INITIALIZER = `window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: new URL(root.getAttribute('data-spec'), document.baseURI).href,
    domNode: root,
    // No call to validator.swagger.io: the page talks to this API only.
    validatorUrl: null,
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

interface Asset {
  body: string;
  contentType: string;
  etag: string;
}

interface DocsAssets {
  /** Content-hashed file name → asset: a name never changes content, so it is cached for a year. */
  files: Map<string, Asset>;
  names: { style: string; bundle: string; initializer: string };
}

/** swagger-ui-dist's directory, from tsx sources and from the compiled dist/ alike. */
export function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

function loadAssets(): DocsAssets {
  const dir = swaggerUiDir();
  // The source-map comments would send browser tools after files this API does not serve.
  const read = (file: string) => readFileSync(join(dir, file), 'utf8').replace(/\n?\/[*/]# sourceMappingURL=\S+(\s*\*\/)?\s*$/, '\n');
  const files = new Map<string, Asset>();
  const add = (stem: string, ext: 'css' | 'js', body: string): string => {
    const hash = createHash('sha256').update(body).digest('hex');
    const name = `${stem}.${hash.slice(0, 12)}.${ext}`;
    const contentType = ext === 'css' ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    files.set(name, { body, contentType, etag: `"${hash.slice(0, 32)}"` });
    return name;
  };
  return {
    files,
    names: {
      style: add('swagger-ui', 'css', read('swagger-ui.css')),
      bundle: add('swagger-ui-bundle', 'js', read('swagger-ui-bundle.js')),
      initializer: add('docs', 'js', INITIALIZER),
    },
  };
}

/** Relative links: /docs resolves them to /docs/…, also under a public URL's path prefix. */
function pageHtml(names: DocsAssets['names']): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>authcap API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/assets/${names.style}">
<script defer src="docs/assets/${names.bundle}"></script>
<script defer src="docs/assets/${names.initializer}"></script>
</head>
<body>
<main id="swagger-ui" data-spec="docs/openapi.json"><p>Loading the API reference…</p></main>
<noscript><p>This page needs JavaScript. The OpenAPI document itself is at docs/openapi.json.</p></noscript>
</body>
</html>
`;
}

/** Mounts GET /docs, /docs/openapi.json and /docs/assets/:file (public). */
export function registerDocsRoutes(router: Router, openApiDocument: () => Record<string, unknown>): void {
  let assets: DocsAssets | undefined;
  // Read on first use (about 2 MB): an API nobody reads the docs of never loads them.
  const docsAssets = () => {
    assets ??= loadAssets();
    return assets;
  };
  router
    .on('GET', '/docs', 'public', async (): Promise<JsonResponse> => {
      const { names } = docsAssets();
      return {
        status: 200,
        body: pageHtml(names),
        headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...docsSecurityHeaders },
      };
    })
    .on('GET', '/docs/openapi.json', 'public', async () => ({ status: 200, body: openApiDocument(), headers: { 'cache-control': 'no-cache' } }))
    .on('GET', '/docs/assets/:file', 'public', async ({ params }) => {
      const asset = docsAssets().files.get(params.file!);
      if (!asset) throw new AuthcapError('not_found', 'no such asset');
      return {
        status: 200,
        body: asset.body,
        headers: { 'content-type': asset.contentType, etag: asset.etag, 'cache-control': 'public, max-age=31536000, immutable' },
      };
    });
}
