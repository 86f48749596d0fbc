// Chromium through playwright-core for the checkout tests: a phone-sized page (390×844) in a fixed
// locale and time zone (so "the payer's local time" is a real conversion), screenshots of each state,
// and requests held back on demand so passing states (loading, submitting) can be seen.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, inject } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page, type Route } from 'playwright-core';
import type { TestWallet } from './wallet.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const shotsDir = join(root, 'test-results', 'browser');
/** AUTHCAP_DOCS_SCREENSHOTS=1 also refreshes the reviewed set in docs/checkout/. */
const docsDir = join(root, 'docs', 'checkout');

export const PHONE = { width: 390, height: 844 };
export const TIME_ZONE = 'Europe/Berlin';

export const chromiumPath = () => inject('chromiumPath');

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true });
}

/**
 * One Chromium for a describe block: `open` gives a fresh phone-sized page (with `wallet` injected);
 * every page's context and the browser are closed after the block.
 */
export function useBrowser(): { open: (wallet?: TestWallet) => Promise<OpenPage> } {
  let browser: Browser | undefined;
  const opened: OpenPage[] = [];
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    for (const o of opened) await o.context.close().catch(() => undefined);
    await browser?.close();
  });
  return {
    async open(wallet?: TestWallet) {
      const o = await openPage(browser!, wallet);
      opened.push(o);
      return o;
    },
  };
}

export interface OpenPage {
  context: BrowserContext;
  page: Page;
  /** Errors the page logged (a CSP violation, an uncaught exception, a failed request). */
  errors: string[];
}

export async function openPage(browser: Browser, wallet?: TestWallet): Promise<OpenPage> {
  const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-US', timezoneId: TIME_ZONE });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (err) => errors.push(err.message));
  if (wallet) await wallet.install(page);
  return { context, page, errors };
}

/** Waits until the page shows `view` (the data-view the page sets on its root). */
export async function waitForView(page: Page, view: string, timeout = 30_000): Promise<void> {
  await page.locator(`#app[data-view="${view}"]`).waitFor({ state: 'attached', timeout });
}

export async function shot(page: Page, testCase: string, state: string): Promise<void> {
  mkdirSync(shotsDir, { recursive: true });
  const file = join(shotsDir, `${testCase}-${state}.png`);
  await page.screenshot({ path: file, animations: 'disabled' });
  if (process.env.AUTHCAP_DOCS_SCREENSHOTS === '1') {
    mkdirSync(docsDir, { recursive: true });
    copyFileSync(file, join(docsDir, `${testCase}-${state}.png`));
  }
}

/** Holds requests whose URL matches until the returned function is called. */
export async function hold(page: Page, pattern: RegExp): Promise<() => Promise<void>> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held: Promise<void>[] = [];
  const handler = (route: Route) => {
    const done = gate.then(() => route.continue());
    held.push(done);
    return done;
  };
  await page.route(pattern, handler);
  return async () => {
    release();
    // Unrouting while a handler still holds a request would let Playwright settle it twice.
    await Promise.all(held);
    await page.unroute(pattern, handler);
  };
}

/** The text of the status box. */
export async function statusText(page: Page): Promise<string> {
  return (await page.locator('#app .status').innerText()).replace(/\s+/g, ' ');
}

/** Clicks the status box's button or link with this label. */
export async function press(page: Page, label: string | RegExp): Promise<void> {
  await page.locator('#app .status .actions').getByText(label).click();
}
