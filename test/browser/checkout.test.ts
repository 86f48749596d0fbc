// The checkout page in a real Chromium against the stack as `npm start` runs it, with an injected
// EIP-1193 wallet whose signatures come from anvil's unlocked payer accounts. Each state is
// screenshotted at 390×844 into test-results/browser/<case>-<state>.png.
import { describe, expect, it } from 'vitest';
import { api, dev, newOrderId } from '../support/api.js';
import { chromiumPath, hold, press, shot, statusText, useBrowser, waitForView } from './support/browser.js';
import { INSTALL_HINT } from './support/chromium.js';
import { TestWallet } from './support/wallet.js';

const hasChromium = Boolean(chromiumPath());
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function createDraft(payer: string, amount: string, validForSeconds?: number) {
  const res = await api('POST', '/v1/authorizations', { orderId: newOrderId('checkout'), payer, amount, validForSeconds });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.checkoutUrl).toBeTruthy();
  return res.body;
}

const stateOf = async (id: string) => (await api('GET', `/v1/authorizations/${id}`)).body;

describe.skipIf(!hasChromium)(`the checkout page in Chromium${hasChromium ? '' : ` (skipped: ${INSTALL_HINT})`}`, () => {
  const { open } = useBrowser();
  const payer = (i: number) => dev().payers[i]!.address;
  const walletFor = (account: string, chainId = dev().chainId) => new TestWallet(dev().rpcUrl, account, chainId);

  it('sign → stored → capture: the payer sees what they sign, signs the exact typed data, and watches it get collected', async () => {
    const d = await createDraft(payer(0), '12.50');
    const wallet = walletFor(payer(0));
    const { page, errors } = await open(wallet);
    const releaseSession = await hold(page, /\/session\?/);
    await page.goto(d.checkoutUrl);
    await waitForView(page, 'loading');
    await shot(page, 'sign', 'loading');
    await releaseSession();

    await waitForView(page, 'ready');
    expect(await page.getByTestId('amount').innerText()).toBe('12.50 USDC');
    // The window in the payer's time zone (the context runs in Europe/Berlin).
    const expected = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', hour: 'numeric', minute: '2-digit' }).format(
      new Date(Number(d.authorization.validBefore) * 1000),
    );
    expect(await page.getByTestId('window').innerText()).toContain(expected);
    const explain = (await page.locator('.explain').innerText()).replace(/\s+/g, ' ');
    expect(explain).toContain('to collect exactly 12.50 USDC from your wallet until');
    expect(explain).toContain('Nothing moves now');
    expect(explain).toContain('You can cancel');
    await shot(page, 'sign', 'ready');

    await press(page, 'Connect wallet');
    await waitForView(page, 'sign');
    await shot(page, 'sign', 'connected');

    const releaseSigning = wallet.holdSigning();
    await press(page, 'Sign authorization');
    await waitForView(page, 'signing');
    await shot(page, 'sign', 'signing');
    const releaseSubmit = await hold(page, /\/signature\?/);
    releaseSigning();
    await waitForView(page, 'submitting');
    await shot(page, 'sign', 'submitting');
    await releaseSubmit();

    await waitForView(page, 'stored');
    expect(await statusText(page)).toContain('Authorized');
    await shot(page, 'sign', 'stored');
    // The wallet was asked for exactly the typed data the API drafted, by the payer's account.
    const [request] = wallet.signatureRequests();
    expect(request!.params[0]).toBe(payer(0));
    expect(JSON.parse(request!.params[1] as string)).toEqual(d.typedData);
    expect((await stateOf(d.id)).state).toBe('stored');

    const captured = await api('POST', `/v1/authorizations/${d.id}/capture`);
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.state).toBe('captured');
    await waitForView(page, 'captured');
    expect(await statusText(page)).toContain('12.50 USDC was collected');
    await shot(page, 'sign', 'captured');
    await page.reload();
    await waitForView(page, 'captured');
    expect(errors).toEqual([]);
  });

  it('rejection: the payer declines in the wallet; nothing is stored, and signing later still works', async () => {
    const d = await createDraft(payer(1), '3');
    const wallet = walletFor(payer(1));
    wallet.rejectSigning = true;
    const { page, errors } = await open(wallet);
    await page.goto(d.checkoutUrl);
    await press(page, 'Connect wallet');
    await press(page, 'Sign authorization');
    await waitForView(page, 'rejected');
    expect(await statusText(page)).toContain('You declined to sign');
    await shot(page, 'rejected', 'rejected');
    expect((await stateOf(d.id)).state).toBe('drafted');

    await press(page, 'Try again');
    await waitForView(page, 'stored');
    expect((await stateOf(d.id)).state).toBe('stored');
    expect(errors).toEqual([]);
  });

  it('a partial capture: the payer is told what was collected and that the rest came back', async () => {
    const d = await createDraft(payer(2), '20');
    const wallet = walletFor(payer(2));
    const { page, errors } = await open(wallet);
    await page.goto(d.checkoutUrl);
    await press(page, 'Connect wallet');
    await press(page, 'Sign authorization');
    await waitForView(page, 'stored');
    const captured = await api('POST', `/v1/authorizations/${d.id}/capture`, { amount: '15' });
    expect([200, 202], JSON.stringify(captured.body)).toContain(captured.status);
    await waitForView(page, 'captured');
    const text = (await statusText(page)).replace(/\s+/g, ' ');
    expect(text).toContain('15.00 USDC was collected');
    expect(text).toContain('You authorized 20.00 USDC; the other 5.00 USDC went back to your account.');
    await shot(page, 'partial', 'captured');
    expect(errors).toEqual([]);
  });

  it('a hold: the payer is told the money will be held and until when, signs, and sees it held, captured in part, and the rest come back', async () => {
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('checkout-hold'), payer: payer(3), amount: '12.50', hold: true });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const d = created.body;
    const until = new Intl.DateTimeFormat('en-US', {
      timeZone: 'Europe/Berlin',
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZoneName: 'short',
    }).format(new Date(d.hold.captureBefore));
    // Anvil unlocks payers 0–9 only (its wallet signs here); 3 signs nothing elsewhere in this file.
    const wallet = walletFor(payer(3));
    const { page, errors } = await open(wallet);
    await page.goto(d.checkoutUrl);
    await waitForView(page, 'ready');
    const explain = (await page.locator('.explain').innerText()).replace(/\s+/g, ' ');
    expect(explain).toContain(`12.50 USDC will be held for Example Shop until ${until}; they capture what you owe and the rest comes back to you.`);
    expect(explain).toContain('cannot be canceled once it is placed');
    // In the summary too, on lines that never break inside: the day, then the time.
    const [day, time] = [
      new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', year: 'numeric', month: 'short', day: 'numeric' }),
      new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' }),
    ].map((f) => f.format(new Date(d.hold.captureBefore)));
    expect((await page.getByTestId('held-until').innerText()).replace(/\s+/g, ' ')).toBe(`until ${day} ${time}`);
    await shot(page, 'hold', 'ready');

    await press(page, 'Connect wallet');
    await press(page, 'Sign authorization');
    await waitForView(page, 'held');
    expect((await statusText(page)).replace(/\s+/g, ' ')).toContain(`Your 12.50 USDC is held until ${until}.`);
    await shot(page, 'hold', 'held');
    // The wallet signed the collector's ReceiveWithAuthorization exactly as drafted.
    expect(JSON.parse(wallet.signatureRequests()[0]!.params[1] as string)).toEqual(d.typedData);

    const part = await api('POST', `/v1/authorizations/${d.id}/capture`, { amount: '3.00' }, { headers: { 'idempotency-key': `${d.id}-part-1` } });
    expect(part.status, JSON.stringify(part.body)).toBe(200);
    await page.getByText('has captured 3.00 USDC so far').waitFor({ timeout: 15_000 });
    expect(await statusText(page)).toContain('9.50 USDC is still held');
    await shot(page, 'hold', 'held-part');

    const voided = await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'shipped short' });
    expect(voided.status, JSON.stringify(voided.body)).toBe(200);
    await waitForView(page, 'captured');
    const text = (await statusText(page)).replace(/\s+/g, ' ');
    expect(text).toContain('3.00 USDC was collected by Example Shop');
    expect(text).toContain('The other 9.50 USDC held came back to your account.');
    await shot(page, 'hold', 'captured');
    expect(errors).toEqual([]);
  });

  it('wrong account: says which account must sign, never asks it to sign, and continues once the payer switches', async () => {
    const d = await createDraft(payer(2), '4.2');
    const wallet = walletFor(payer(3));
    const { page, errors } = await open(wallet);
    await page.goto(d.checkoutUrl);
    await press(page, 'Connect wallet');
    await waitForView(page, 'wrong-account');
    const text = await statusText(page);
    expect(text).toContain(`${payer(2).slice(0, 6)}…${payer(2).slice(-4)}`);
    expect(text).toContain(`${payer(3).slice(0, 6)}…${payer(3).slice(-4)}`);
    await shot(page, 'wrong-account', 'wrong-account');
    expect(wallet.signatureRequests()).toEqual([]);

    await wallet.switchAccount(payer(2));
    await waitForView(page, 'sign');
    await press(page, 'Sign authorization');
    await waitForView(page, 'stored');
    expect(errors).toEqual([]);
  });

  it('wrong chain: offers wallet_switchEthereumChain, and signs once switched', async () => {
    const d = await createDraft(payer(4), '5');
    const wallet = walletFor(payer(4), 1);
    const { page, errors } = await open(wallet);
    await page.goto(d.checkoutUrl);
    await press(page, 'Connect wallet');
    await waitForView(page, 'wrong-chain');
    expect(await statusText(page)).toContain(`Your wallet is on chain 1; this payment is on chain ${dev().chainId}`);
    await shot(page, 'wrong-chain', 'wrong-chain');
    expect(wallet.signatureRequests()).toEqual([]);

    await press(page, `Switch to chain ${dev().chainId}`);
    await waitForView(page, 'sign');
    expect(wallet.calls.find((c) => c.method === 'wallet_switchEthereumChain')?.params).toEqual([{ chainId: `0x${dev().chainId.toString(16)}` }]);
    await shot(page, 'wrong-chain', 'switched');
    await press(page, 'Sign authorization');
    await waitForView(page, 'stored');
    expect(errors).toEqual([]);
  });

  it('expired draft: once validBefore passes the page says so and offers nothing to sign', async () => {
    const d = await createDraft(payer(5), '6', 3);
    const wallet = walletFor(payer(5));
    const { page, errors } = await open(wallet);
    await page.goto(d.checkoutUrl);
    await waitForView(page, 'ready');
    // The page turns by itself when the window closes, before the server has even moved.
    await waitForView(page, 'expired', 15_000);
    for (let i = 0; i < 60 && (await stateOf(d.id)).state !== 'expired'; i += 1) await sleep(500);
    expect((await stateOf(d.id)).state).toBe('expired');
    await page.reload();
    await waitForView(page, 'expired');
    expect(await statusText(page)).toContain('This payment request has expired');
    expect(await page.locator('#app .status button').count()).toBe(0);
    await shot(page, 'expired', 'expired');
    expect(wallet.signatureRequests()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('other states: no wallet, a voided request, a link that is not valid', async () => {
    const d = await createDraft(payer(6), '7');
    const plain = await open();
    await plain.page.goto(d.checkoutUrl);
    await waitForView(plain.page, 'no-wallet');
    await shot(plain.page, 'other', 'no-wallet');

    await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'order canceled by the customer' });
    await waitForView(plain.page, 'voided');
    await shot(plain.page, 'other', 'voided');
    expect(plain.errors).toEqual([]);

    const bad = await open();
    const res = await bad.page.goto(d.checkoutUrl.replace(/token=.{4}/, 'token=AAAA'));
    expect(res?.status()).toBe(404);
    expect(await bad.page.locator('[data-view="invalid-link"]').innerText()).toContain('This link is not valid');
    await shot(bad.page, 'other', 'invalid-link');
  });
});
