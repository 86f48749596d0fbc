// The payer's cancel page in a real Chromium: signs CancelAuthorization with the injected wallet
// (anvil's unlocked payer account), the merchant relays it, and the authorization ends canceled
// with the AuthorizationCanceled fact onchain.
import { describe, expect, it } from 'vitest';
import { createPublicClient, http, parseEventLogs, type Hex } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, dev, newOrderId, walletSign } from '../support/api.js';
import { chromiumPath, press, shot, statusText, useBrowser, waitForView } from './support/browser.js';
import { INSTALL_HINT } from './support/chromium.js';
import { TestWallet } from './support/wallet.js';

const hasChromium = Boolean(chromiumPath());

describe.skipIf(!hasChromium)(`the cancel page in Chromium${hasChromium ? '' : ` (skipped: ${INSTALL_HINT})`}`, () => {
  const { open } = useBrowser();
  // Payers 7 to 9: anvil unlocks the first 12 dev accounts (payers 0 to 9); checkout.test.ts uses 0 to 6.
  const payer = (i: number) => dev().payers[i]!;

  async function storedFor(index: number, amount: string) {
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('cancel'), payer: payer(index).address, amount });
    expect(created.status).toBe(201);
    const signed = await api('POST', `/v1/authorizations/${created.body.id}/signature`, {
      signature: walletSign(created.body.typedData, payer(index).privateKey),
    });
    expect(signed.status).toBe(200);
    expect(signed.body.cancelUrl).toMatch(/\/cancel\?token=/);
    return { drafted: created.body, stored: signed.body };
  }

  it('payer cancel: signs CancelAuthorization, ends canceled with AuthorizationCanceled onchain', async () => {
    const { drafted, stored } = await storedFor(7, '8.75');
    const wallet = new TestWallet(dev().rpcUrl, payer(7).address, dev().chainId);
    const { page, errors } = await open(wallet);
    await page.goto(stored.cancelUrl);
    await waitForView(page, 'ready');
    expect(await page.getByTestId('amount').innerText()).toBe('8.75 USDC');
    expect((await page.locator('.explain').innerText()).replace(/\s+/g, ' ')).toContain('can no longer collect 8.75 USDC');
    await shot(page, 'cancel', 'ready');

    await press(page, 'Connect wallet');
    await waitForView(page, 'sign');
    await shot(page, 'cancel', 'connected');
    await press(page, 'Sign cancellation');
    await waitForView(page, 'canceled', 30_000);
    await shot(page, 'cancel', 'canceled');
    const [request] = wallet.signatureRequests();
    expect(JSON.parse(request!.params[1] as string)).toEqual(stored.cancellationTypedData);

    const resource = (await api('GET', `/v1/authorizations/${stored.id}`)).body;
    expect(resource.state).toBe('canceled');
    expect(resource.cancellation).toMatchObject({ by: 'authcap' });
    expect(resource.history.map((h: { state: string }) => h.state)).toEqual(['drafting', 'drafted', 'stored', 'canceling', 'canceled']);
    const chain = createPublicClient({ transport: http(dev().rpcUrl) });
    const receipt = await chain.getTransactionReceipt({ hash: resource.cancellation.transactionHash as Hex });
    const canceled = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationCanceled' });
    expect(canceled.map((log) => log.args)).toEqual([{ authorizer: payer(7).address, nonce: drafted.authorization.nonce }]);
    expect(await statusText(page)).toContain(resource.cancellation.transactionHash.slice(0, 6));

    // The checkout link of the same authorization now says it was canceled.
    await page.goto(stored.cancelUrl.replace('/cancel?', '?'));
    await waitForView(page, 'canceled');
    await shot(page, 'cancel', 'checkout-canceled');
    expect(errors).toEqual([]);
  });

  it('a drafted authorization has nothing to cancel; a declined cancellation leaves it stored', async () => {
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('cancel-draft'), payer: payer(8).address, amount: '1' });
    const { page, errors } = await open(new TestWallet(dev().rpcUrl, payer(8).address, dev().chainId));
    await page.goto(created.body.checkoutUrl.replace('?', '/cancel?'));
    await waitForView(page, 'not-authorized');
    await shot(page, 'cancel', 'not-authorized');

    const { stored } = await storedFor(9, '2');
    const wallet = new TestWallet(dev().rpcUrl, payer(9).address, dev().chainId);
    wallet.rejectSigning = true;
    const second = await open(wallet);
    await second.page.goto(stored.cancelUrl);
    await press(second.page, 'Connect wallet');
    await press(second.page, 'Sign cancellation');
    await waitForView(second.page, 'rejected');
    expect(await statusText(second.page)).toContain('the authorization still stands');
    await shot(second.page, 'cancel', 'rejected');
    expect((await api('GET', `/v1/authorizations/${stored.id}`)).body.state).toBe('stored');
    expect([...errors, ...second.errors]).toEqual([]);
  });
});
