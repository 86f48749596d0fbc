// The reference page's routes on a real HTTP server (the API's Router): /docs, its assets and the
// document answer without a key, with their content types and caching, and every asset the page
// links to is served from swagger-ui-dist on disk, byte for byte.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsSecurityHeaders, registerDocsRoutes, swaggerUiDir } from '../../../api/docsPage.js';
import { openApiDocument } from '../../../api/openapi.js';
import { Router } from '../../../api/router.js';
import { createSchemas } from '../../../api/schemas.js';
import { errorCodes } from '../../../domain/errors.js';

let server: Server;
let base: string;

beforeAll(async () => {
  // No key opens anything here: only public routes can answer.
  const router = new Router({ authenticate: () => undefined });
  const schemas = createSchemas({});
  router.on('GET', '/v1/secret', ['operator'], async () => ({ status: 200, body: {} }));
  registerDocsRoutes(router, () => openApiDocument(router.list(), schemas));
  server = createServer((req, res) => void router.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The asset links of the page, as the browser resolves them from /docs. */
function linksOf(html: string): string[] {
  return [...html.matchAll(/(?:href|src)="(docs\/assets\/[^"]+)"/g)].map((m) => new URL(m[1]!, `${base}/docs`).pathname);
}

describe('GET /docs', () => {
  it('is HTML without a key, under a CSP that allows only this origin', async () => {
    const res = await fetch(`${base}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(docsSecurityHeaders['content-security-policy']);
    expect(res.headers.get('content-security-policy')).not.toMatch(/unsafe|https?:|\*/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).toContain('data-spec="docs/openapi.json"');
    // Nothing from elsewhere: every link is relative to this API.
    expect(html).not.toMatch(/(?:href|src)="(?:https?:)?\/\//);
    expect(linksOf(html)).toHaveLength(3);
    // The keyed route next to it still needs a key.
    expect((await fetch(`${base}/v1/secret`)).status).toBe(401);
  });

  it('serves each linked asset as swagger-ui-dist has it, content-typed and cached for good under its hashed name', async () => {
    const html = await (await fetch(`${base}/docs`)).text();
    const served: Record<string, string> = {};
    for (const path of linksOf(html)) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control'), path).toBe('public, max-age=31536000, immutable');
      const type = path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
      expect(res.headers.get('content-type'), path).toBe(type);
      served[
        path
          .split('/')
          .pop()!
          .replace(/\.[0-9a-f]{12}\./, '.')
      ] = await res.text();
      // A browser that has it is told so without the body.
      const again = await fetch(`${base}${path}`, { headers: { 'if-none-match': res.headers.get('etag')! } });
      expect(again.status, path).toBe(304);
    }
    expect(Object.keys(served).sort()).toEqual(['docs.js', 'swagger-ui-bundle.js', 'swagger-ui.css']);
    const dir = swaggerUiDir();
    expect(served['swagger-ui-bundle.js']!.trim()).toBe(readFileSync(join(dir, 'swagger-ui-bundle.js'), 'utf8').trim());
    expect(served['swagger-ui.css']).toContain('.swagger-ui');
    expect(served['swagger-ui.css']).not.toContain('sourceMappingURL');
    expect(served['docs.js']).toContain('validatorUrl: null');
  });

  it('answers 404 for an asset it does not have', async () => {
    const res = await fetch(`${base}/docs/assets/swagger-ui-bundle.000000000000.js`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('/docs/openapi.json is the generated document, with a row per error code in its description', async () => {
    const res = await fetch(`${base}/docs/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const doc = (await res.json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/docs', '/docs/openapi.json', '/docs/assets/{file}', '/v1/secret']));
    expect(doc.paths['/docs'].get.security).toEqual([]);
    const rows = (doc.info.description as string).split('\n').filter((line) => /^\| `[a-z_]+` \|/.test(line));
    expect(
      Object.fromEntries(
        rows.map((row) =>
          row
            .split(' | ')
            .slice(0, 2)
            .map((c) => c.replace(/^\| /, '').replaceAll('`', '')),
        ),
      ),
    ).toEqual(Object.fromEntries(Object.entries(errorCodes).map(([code, status]) => [code, String(status)])));
  });
});
