// An operator's void from the Temporal Web UI (the one the CLI dev server embeds, as `npm start` runs
// it) in a real Chromium: the UI shows the authorization's encrypted input and memo decoded through
// the codec server, and its own "Send a Signal" form sends `void` sealed through the codec server's
// /encode, which the workflow accepts as an operator's void. A UI that sent the input plain would
// have the signal dropped (workflows/sealedInputs.ts): the test then fails showing the page's requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { walletSign } from '../support/api.js';
import { chromiumPath, launch } from './support/browser.js';
import { INSTALL_HINT } from './support/chromium.js';
import { apiOf, describeExchanges, encodingOf, fromBase64, openUiPage, uiShot, useUiStack, type UiPage, type WirePayload } from './support/temporalUi.js';

const hasChromium = Boolean(chromiumPath());
const VOID_INPUT = { reason: 'duplicate order', by: 'ops' };
const ENCRYPTED = 'binary/encrypted';

describe.skipIf(!hasChromium)(`the Temporal UI in Chromium${hasChromium ? '' : ` (skipped: ${INSTALL_HINT})`}`, () => {
  const stack = useUiStack();
  let browser: Browser | undefined;
  const opened: UiPage[] = [];
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    for (const o of opened) await o.context.close().catch(() => undefined);
    await browser?.close();
  });
  const open = async () => {
    const o = await openUiPage(browser!);
    opened.push(o);
    return o;
  };
  const dev = () => stack().devJson;
  const api = (method: string, path: string, body?: unknown) => apiOf(dev(), method, path, body);

  /** A stored authorization (created, then signed by the payer), as cancel.test.ts's storedFor. */
  async function stored(orderId: string) {
    // Payer 10: the suite's checkout and cancel tests use 0 to 9 when this runs on the suite's stack.
    const payer = dev().payers[10]!;
    const created = await api('POST', '/v1/authorizations', { orderId, payer: payer.address, amount: '4.20' });
    expect(created.status).toBe(201);
    const signed = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, payer.privateKey) });
    expect(signed.status).toBe(200);
    expect(signed.body.state).toBe('stored');
    return signed.body as { id: string; orderId: string };
  }

  const workflowUrl = (orderId: string) =>
    `${dev().temporalUiUrl}/namespaces/${encodeURIComponent(dev().temporalNamespace)}/workflows/${encodeURIComponent(`authorization-${orderId}`)}`;
  const codecRequests = (o: UiPage, path: '/decode' | '/encode') => o.exchanges.filter((e) => e.method === 'POST' && e.url === `${dev().codecEndpoint}${path}`);

  it("an operator's void sent from the UI's Send a Signal form is sealed through the codec and voids", async () => {
    const orderId = `ui-void-${process.pid}-${Date.now()}`;
    const authorization = await stored(orderId);
    const o = await open();
    const { page } = o;
    const evidence = () => `the page's requests:\n${describeExchanges(o.exchanges)}`;

    // The workflow page: its input is encrypted at rest, the UI shows it decoded through the codec server.
    await page.goto(workflowUrl(orderId));
    const decodedInput = page.locator('.cm-line', { hasText: `"orderId": "${orderId}"` }).first();
    await decodedInput.waitFor({ timeout: 30_000 }).catch((err) => {
      throw new Error(`the UI did not show the input decoded (${(err as Error).message});\n${evidence()}`);
    });
    await uiShot(page, 'temporal-ui', 'workflow');

    // More Actions → Send a Signal: `void` with the operator's JSON.
    await page.getByRole('button', { name: 'More Actions' }).click();
    await page.getByRole('menuitem', { name: 'Send a Signal' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send a Signal' });
    await dialog.getByTestId('signal-select-button').click();
    // The names come from the workflow's metadata query (its handlers): `void` is among them.
    await dialog.getByRole('option', { name: 'void', exact: true }).click();
    const editor = dialog.locator('.cm-content');
    // The operator names the order it voids: a void copied to another authorization is dropped.
    const typed = { orderId, ...VOID_INPUT };
    await editor.fill(JSON.stringify(typed));
    // Leaving the editor reformats the JSON and enables Submit: leave it before clicking, not in the click.
    await editor.blur();
    await dialog.locator('.cm-line', { hasText: '"by": "ops"' }).waitFor();
    await uiShot(page, 'temporal-ui', 'signal-form');
    const signalUrl = /\/api\/v1\/namespaces\/[^/]+\/workflows\/[^/]+\/signal\/void(\?|$)/;
    const [signalResponse] = await Promise.all([page.waitForResponse((r) => signalUrl.test(r.url())), dialog.getByRole('button', { name: 'Submit' }).click()]);
    await dialog.waitFor({ state: 'hidden' });
    await uiShot(page, 'temporal-ui', 'signal-sent');

    // The input went to the codec server's /encode as the operator typed it and came back sealed…
    const encodes = codecRequests(o, '/encode');
    expect(encodes, `the UI did not seal the signal's input through ${dev().codecEndpoint}/encode;\n${evidence()}`).toHaveLength(1);
    const sent = JSON.parse(encodes[0]!.body ?? '{}') as { payloads: WirePayload[] };
    expect(sent.payloads.map((p) => [encodingOf(p), JSON.parse(fromBase64(p.data))])).toEqual([['json/plain', typed]]);
    expect(encodes[0]!.status, evidence()).toBe(200);
    // …and the signal the UI sent to Temporal carries the sealed payload only, never the plain text.
    expect(signalResponse.status(), evidence()).toBe(200);
    const signal = JSON.parse(signalResponse.request().postData() ?? '{}') as { signalName: string; input?: { payloads?: WirePayload[] } };
    expect(signal.signalName).toBe('void');
    expect(
      (signal.input?.payloads ?? []).map(encodingOf),
      `the UI sent the void signal unsealed (the workflow drops it): ${signalResponse.request().postData()}\n${evidence()}`,
    ).toEqual([ENCRYPTED]);
    expect(signalResponse.request().postData()).not.toContain(Buffer.from(JSON.stringify(typed)).toString('base64'));

    // The workflow took it as an operator's void.
    const after = await api('GET', `/v1/authorizations/${authorization.id}?wait=30&state=stored`);
    expect(after.status).toBe(200);
    expect(after.body.state, `the void signal was not acted on;\n${evidence()}`).toBe('voided');
    expect(after.body.void).toMatchObject(VOID_INPUT);
    expect(after.body.history.at(-1)).toMatchObject({ state: 'voided', event: 'VOID', actor: 'ops', reason: 'duplicate order' });

    // The memo, encrypted at rest, reads decoded on the UI's Memo tab: the void is in it.
    await page.getByRole('tab', { name: 'Memo' }).click();
    await page.waitForURL(/\/memo(\?|$)/);
    // The memo's own keys under "fields" (not the workflow's result, which the History tab shows). It
    // also holds the events, one key each: its editor draws only the lines in view, so it is scrolled to each.
    await lineInView(page, '"fields"');
    await lineInView(page, '"authorization": {');
    await lineInView(page, '"state": "voided"');
    await lineInView(page, '"reason": "duplicate order"');
    await uiShot(page, 'temporal-ui', 'memo');
    // What the UI's API serves, and the page decoded, is ciphertext: the workflow's input and its memo.
    const uiApi = workflowUrl(orderId).replace(dev().temporalUiUrl, `${dev().temporalUiUrl}/api/v1`);
    const described = (await (await fetch(uiApi)).json()) as { workflowExecutionInfo: { memo: { fields: Record<string, WirePayload> } } };
    const history = (await (await fetch(`${uiApi}/history`)).json()) as {
      history: { events: { workflowExecutionStartedEventAttributes?: { input: { payloads: WirePayload[] } } }[] };
    };
    const atRest = [
      ...history.history.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads,
      ...Object.values(described.workflowExecutionInfo.memo.fields),
    ].map(encodingOf);
    expect(atRest.length).toBeGreaterThan(1);
    expect(atRest).toEqual(atRest.map(() => ENCRYPTED));
    // Every decode the page asked for was answered (the codec server trusts this UI's origin).
    const decodes = codecRequests(o, '/decode');
    expect(decodes.length, evidence()).toBeGreaterThan(0);
    expect(
      decodes.filter((d) => d.failure !== undefined || (d.status !== undefined && d.status !== 200)),
      evidence(),
    ).toEqual([]);
    expect(o.errors).toEqual([]);
  });
});

/** Scrolls the page (a line at a time, then by screens) until a line of the memo's editor with `text` is drawn. */
async function lineInView(page: Page, text: string): Promise<void> {
  // The Send a Signal dialog's editor stays in the page, hidden: only the memo's lines are visible.
  const line = page.locator('.cm-line:visible', { hasText: text }).first();
  await page.locator('.cm-line:visible').first().waitFor();
  for (let step = 0; step < 60; step++) {
    if (await line.isVisible()) return;
    await page.mouse.move(400, 400);
    await page.mouse.wheel(0, 400);
    await page.waitForTimeout(100);
  }
  await line.waitFor({ timeout: 5_000 });
}
