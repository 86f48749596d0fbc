// The API reference page (/docs) in a real Chromium against the stack as `npm start` runs it: it
// loads without a key and without a CSP complaint, shows every route of the OpenAPI document the API
// serves, shows the error table exactly as domain/errors.ts has it, and asks nothing of any host but
// the API's own (no CDN, no validator).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCodes } from '../../domain/errors.js';
import { api, dev } from '../support/api.js';
import { chromiumPath, launch } from './support/browser.js';
import { INSTALL_HINT } from './support/chromium.js';

const hasChromium = Boolean(chromiumPath());
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

describe.skipIf(!hasChromium)(`the API reference page in Chromium${hasChromium ? '' : ` (skipped: ${INSTALL_HINT})`}`, () => {
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    browser = await launch();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (err) => errors.push(err.message));
    // Nothing may leave this host: a request elsewhere is recorded above and then stopped here.
    const own = new URL(dev().apiUrl).host;
    await context.route(
      (url) => url.host !== own,
      (route) => route.abort(),
    );
    const res = await page.goto(`${dev().apiUrl}/docs`);
    expect(res?.status()).toBe(200);
    await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
    await page.locator('.info table tbody tr').first().waitFor();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('serves, without a key, the same document as the keyed /openapi.json', async () => {
    const open = await api('GET', '/docs/openapi.json', undefined, { key: null });
    expect(open.status).toBe(200);
    expect(open.body).toEqual((await api('GET', '/openapi.json')).body);
  });

  it('lists every operation of the OpenAPI document', async () => {
    const doc = (await api('GET', '/docs/openapi.json', undefined, { key: null })).body as { paths: Record<string, Record<string, unknown>> };
    const expected = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => METHODS.includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(expected.length).toBeGreaterThan(20);
    expect(expected).toContain('POST /v1/authorizations/{id}/capture');
    const shown = await page
      .locator('.opblock')
      .evaluateAll((blocks) =>
        blocks.map(
          (b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
        ),
      );
    expect([...shown].sort()).toEqual([...expected].sort());
  });

  it('shows the error table exactly as domain/errors.ts has it: every code, its HTTP status, what it means and what to do', async () => {
    const rows = await page
      .locator('.info table tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
    const shown = Object.fromEntries(rows.map((cells) => [cells[0], Number(cells[1])]));
    expect(rows).toHaveLength(Object.keys(errorCodes).length);
    expect(shown).toEqual({ ...errorCodes });
    for (const cells of rows) {
      expect(cells, cells[0]).toHaveLength(5);
      expect(cells[2]!.length, `${cells[0]}: meaning`).toBeGreaterThan(20);
      expect(cells[3]!.length, `${cells[0]}: what to do`).toBeGreaterThan(20);
    }
    const blocked = rows.find((cells) => cells[0] === 'token_policy_blocked')!;
    expect(blocked[3]).toContain('isBlacklisted');
  });

  it("asked nothing of any host but the API's, and the page logged no error (a CSP refusal would be one)", () => {
    const own = new URL(dev().apiUrl).host;
    expect(requested.length).toBeGreaterThanOrEqual(5);
    // data: URLs (the icons in swagger-ui.css) are no requests; anything else must be this host's.
    expect(requested.filter((url) => !url.startsWith('data:') && new URL(url).host !== own)).toEqual([]);
    expect(requested.map((url) => new URL(url).pathname)).toContain('/docs/openapi.json');
    expect(errors).toEqual([]);
  });

  it("answers the page and its assets with their content types, from the stack's own API process", async () => {
    const html = await fetch(`${dev().apiUrl}/docs`);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");
    const assets = requested.filter((url) => new URL(url).pathname.startsWith('/docs/assets/'));
    expect(assets.length).toBe(3);
    for (const url of assets) {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type'), url).toBe(url.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      expect(res.headers.get('cache-control'), url).toContain('immutable');
    }
  });
});
