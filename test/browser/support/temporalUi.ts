// The Temporal Web UI for the browser tests: a stack that serves it (the suite's own when it has a
// UI, else one started for the file from support/uiStackProcess.ts, as `npm start` runs it), a
// desktop-sized page on it, and a record of what the page sent to the codec server and to the UI's
// API, so that a test can show what went over the wire.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, inject } from 'vitest';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import type { DevJson } from '../../../devstack/stack.js';
import { type ApiResult, readApiResult } from '../../support/api.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const READY_PREFIX = 'authcap-ui-stack ';

/** What the browser suite's globalSetup clears: the stack must not pick up a developer's settings. */
const CLEARED = [
  'TEMPORAL_ADDRESS',
  'AUTHCAP_CONFIG',
  'MERCHANT_PRIVATE_KEY',
  'MERCHANT_PRIVATE_KEYS',
  'AUTHCAP_API_KEY',
  'AUTHCAP_CODEC_KEYS',
  'AUTHCAP_CODEC_KEY_FILE',
  'AUTHCAP_CODEC',
  'AUTHCAP_PUBLIC_URL',
  'AUTHCAP_CHECKOUT_SECRET',
  'AUTHCAP_MERCHANT_NAME',
];

export interface UiStack {
  devJson: DevJson & { temporalUiUrl: string };
  /** Where it came from: the browser suite's stack, or one started for this file. */
  source: 'suite' | 'own';
  stop(): Promise<void>;
}

/**
 * A stack whose Temporal Web UI runs: the suite's (test/browser/stackProcess.ts) when its dev.json
 * has a temporalUiUrl, else one of this file's own, started in beforeAll and stopped in afterAll.
 */
export function useUiStack(): () => UiStack {
  let stack: UiStack | undefined;
  beforeAll(async () => {
    const suite = inject('devJson');
    stack = suite.temporalUiUrl ? { devJson: suite as UiStack['devJson'], source: 'suite', stop: () => Promise.resolve() } : await startUiStack();
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  }, 60_000);
  return () => {
    if (!stack) throw new Error('the UI stack is not up');
    return stack;
  };
}

/** The dev stack with its Web UI, in a process tree of its own (support/uiStackProcess.ts). */
export async function startUiStack(): Promise<UiStack> {
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-browser-ui-'));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CLEARED) delete env[name];
  Object.assign(env, { AUTHCAP_STATE_DIR: stateDir, AUTHCAP_MERCHANT_NAME: 'Example Shop' });
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/browser/support/uiStackProcess.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      // The stack stops Temporal, anvil, the worker and the API in turn: give it time before forcing.
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    const devJson = await readyLine(child);
    if (!devJson.temporalUiUrl) throw new Error('the UI stack started without a Web UI');
    return { devJson: devJson as UiStack['devJson'], source: 'own', stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function readyLine(child: ChildProcess): Promise<DevJson> {
  return new Promise<DevJson>((resolve, reject) => {
    let stdout = '';
    let tail = '';
    const timer = setTimeout(() => reject(new Error(`the UI stack was not up after 170 s:\n${tail}`)), 170_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l) => l.startsWith(READY_PREFIX));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line.slice(READY_PREFIX.length)));
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4_000);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the UI stack exited (code ${code}) before it was up:\n${tail}`));
    });
  });
}

/** The HTTP API of `devJson`'s stack, as an order service calls it (test/support/api.ts's `api`, for any stack). */
export async function apiOf<T = any>(devJson: DevJson, method: string, path: string, body?: unknown): Promise<ApiResult<T>> {
  const res = await fetch(`${devJson.apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${devJson.apiKey}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return readApiResult<T>(res);
}

export const DESKTOP = { width: 1440, height: 1000 };

/** A screenshot in test-results/browser/ (never in docs/checkout/, which browser.ts's `shot` refreshes). */
export async function uiShot(page: Page, testCase: string, state: string): Promise<void> {
  const dir = join(root, 'test-results', 'browser');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${testCase}-${state}.png`), animations: 'disabled' });
}

/** One request the page made: method, URL, body, and the status it got (undefined while unanswered or when it failed). */
export interface Exchange {
  method: string;
  url: string;
  body: string | null;
  status?: number;
  failure?: string;
}

export interface UiPage {
  context: BrowserContext;
  page: Page;
  /** Errors the page logged (an uncaught exception, a failed request). */
  errors: string[];
  /** Every request the page sent that is not a static asset: to the UI's API and to the codec server. */
  exchanges: Exchange[];
}

/** A desktop-sized page (the UI's workflow actions are in its header there) recording its requests. */
export async function openUiPage(browser: Browser): Promise<UiPage> {
  const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-US', timezoneId: 'UTC' });
  const page = await context.newPage();
  const errors: string[] = [];
  const exchanges: Exchange[] = [];
  const byRequest = new Map<Request, Exchange>();
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('request', (request) => {
    if (['document', 'script', 'stylesheet', 'image', 'font', 'media'].includes(request.resourceType())) return;
    const exchange: Exchange = { method: request.method(), url: request.url(), body: request.postData() };
    byRequest.set(request, exchange);
    exchanges.push(exchange);
  });
  page.on('requestfinished', (request) => {
    const exchange = byRequest.get(request);
    if (exchange) void request.response().then((response) => (exchange.status = response?.status()));
  });
  page.on('requestfailed', (request) => {
    const exchange = byRequest.get(request);
    if (exchange) exchange.failure = request.failure()?.errorText ?? 'failed';
  });
  return { context, page, errors, exchanges };
}

/** The exchanges, one line each (bodies cut short): the evidence a failed assertion prints. */
export function describeExchanges(exchanges: Exchange[]): string {
  return exchanges.map((e) => `${e.method} ${e.url} → ${e.status ?? e.failure ?? 'no answer'}${e.body ? ` ${e.body.slice(0, 300)}` : ''}`).join('\n');
}

/** A remote-codec payload as the UI sends it: base64 metadata values and data. */
export interface WirePayload {
  metadata?: Record<string, string>;
  data?: string;
}

export const fromBase64 = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');
export const encodingOf = (payload: WirePayload | undefined) => fromBase64(payload?.metadata?.encoding);
