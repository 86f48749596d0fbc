// The checkout page on two networks (issue 27): against a stack of its own serving chains 31337 and
// 31338 (support/networksStack.ts), with a wallet that knows several chains (support/chainsWallet.ts).
// The page names the network and token, moves the wallet to the authorization's chain (adding it
// when the wallet does not know it), and never asks for a signature on another chain.
import { describe, expect, it } from 'vitest';
import { newOrderId } from '../support/api.js';
import { chromiumPath, press, shot, statusText, useBrowser, waitForView } from './support/browser.js';
import { ChainsWallet } from './support/chainsWallet.js';
import { INSTALL_HINT } from './support/chromium.js';
import { useNetworksStack } from './support/networksStack.js';
import { apiOf } from './support/temporalUi.js';

const hasChromium = Boolean(chromiumPath());
const FIRST = 31337;
const SECOND = 31338;

describe.skipIf(!hasChromium)(`the checkout page on two networks${hasChromium ? '' : ` (skipped: ${INSTALL_HINT})`}`, () => {
  const stack = useNetworksStack();
  const { open } = useBrowser();
  const payer = (i: number) => stack().payers[i]!.address;
  const network = (chainId: number) => {
    const found = stack().networks.find((n) => n.chainId === chainId);
    if (!found) throw new Error(`the stack does not serve chain ${chainId}: ${JSON.stringify(stack().networks)}`);
    return found;
  };
  const nodes = () => Object.fromEntries(stack().networks.map((n) => [n.chainId, n.rpcUrl]));
  const stateOf = async (id: string) => (await apiOf(stack(), 'GET', `/v1/authorizations/${id}`)).body;

  async function createDraft(payerAddress: string, amount: string, token: string) {
    const body = { orderId: newOrderId('networks'), payer: payerAddress, amount, network: `eip155:${SECOND}`, token };
    const res = await apiOf(stack(), 'POST', '/v1/authorizations', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.network).toBe(`eip155:${SECOND}`);
    expect(res.body.typedData.domain.chainId).toBe(SECOND);
    expect(res.body.checkoutUrl).toBeTruthy();
    return res.body;
  }

  async function openWith(wallet: ChainsWallet) {
    const opened = await open();
    await wallet.install(opened.page);
    return opened;
  }

  it('a wallet on the other chain: the page names network and token, switches the wallet, and signs there', async () => {
    const d = await createDraft(payer(0), '12.50', 'USDC');
    const second = network(SECOND);
    const wallet = new ChainsWallet({ account: payer(0), chainId: FIRST, nodes: nodes() });
    const { page, errors } = await openWith(wallet);
    await page.goto(d.checkoutUrl);
    await waitForView(page, 'ready');
    expect(await page.getByTestId('amount').innerText()).toBe('12.50 USDC');
    expect(await page.getByTestId('network').innerText()).toBe(`USDC on ${second.name}`);
    expect(await page.getByTestId('network-name').innerText()).toBe(second.name);
    expect(await page.getByTestId('network-id').innerText()).toBe(`chain ${SECOND} · eip155:${SECOND}`);
    await shot(page, 'networks', 'ready');

    await press(page, 'Connect wallet');
    await waitForView(page, 'wrong-chain');
    expect(await statusText(page)).toContain(`Your wallet is on chain ${FIRST}; this payment is on chain ${SECOND} (${second.name}, eip155:${SECOND}).`);
    await shot(page, 'networks', 'wrong-chain');
    expect(wallet.requests('eth_signTypedData_v4')).toEqual([]);

    await press(page, `Switch to chain ${SECOND} (${second.name})`);
    await waitForView(page, 'sign');
    expect(wallet.requests('wallet_switchEthereumChain').map((c) => c.params)).toEqual([[{ chainId: `0x${SECOND.toString(16)}` }]]);
    expect(wallet.requests('wallet_addEthereumChain')).toEqual([]);
    await press(page, 'Sign authorization');
    await waitForView(page, 'stored');
    expect(wallet.requests('eth_signTypedData_v4')).toHaveLength(1);
    expect((await stateOf(d.id)).state).toBe('stored');
    expect(errors).toEqual([]);
  });

  it('a wallet that does not know the chain (4902): the page adds it with the deployment’s public RPC URL, switches, and signs', async () => {
    const d = await createDraft(payer(1), '3', 'USDC');
    const second = network(SECOND);
    const wallet = new ChainsWallet({ account: payer(1), chainId: FIRST, nodes: nodes(), known: [FIRST] });
    const { page, errors } = await openWith(wallet);
    await page.goto(d.checkoutUrl);
    await press(page, 'Connect wallet');
    await waitForView(page, 'wrong-chain');
    await press(page, `Switch to chain ${SECOND} (${second.name})`);
    await waitForView(page, 'sign');
    expect(wallet.calls.map((c) => c.method).filter((m) => m.startsWith('wallet_'))).toEqual([
      'wallet_switchEthereumChain',
      'wallet_addEthereumChain',
      'wallet_switchEthereumChain',
    ]);
    expect(wallet.requests('wallet_addEthereumChain')[0]!.params).toEqual([
      {
        chainId: `0x${SECOND.toString(16)}`,
        chainName: second.name,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: [second.rpcUrl],
      },
    ]);
    await press(page, 'Sign authorization');
    await waitForView(page, 'stored');
    expect((await stateOf(d.id)).state).toBe('stored');
    expect(errors).toEqual([]);
  });

  it('a wallet that moves to another chain before signing, without saying so: the page asks for no signature and offers the switch again', async () => {
    const d = await createDraft(payer(2), '4.2', 'USDC');
    const second = network(SECOND);
    const wallet = new ChainsWallet({ account: payer(2), chainId: SECOND, nodes: nodes() });
    const { page, errors } = await openWith(wallet);
    await page.goto(d.checkoutUrl);
    await press(page, 'Connect wallet');
    await waitForView(page, 'sign');
    expect(await statusText(page)).toContain(`on chain ${SECOND} (${second.name})`);

    wallet.drift(FIRST);
    await press(page, 'Sign authorization');
    await waitForView(page, 'wrong-chain');
    const text = await statusText(page);
    expect(text).toContain('Nothing was signed');
    expect(text).toContain(`your wallet is now on chain ${FIRST}`);
    expect(text).toContain(`chain ${SECOND} (${second.name}, eip155:${SECOND})`);
    await shot(page, 'networks', 'moved-before-signing');
    expect(wallet.requests('eth_signTypedData_v4')).toEqual([]);
    expect((await stateOf(d.id)).state).toBe('drafted');

    await press(page, `Switch to chain ${SECOND} (${second.name})`);
    await waitForView(page, 'sign');
    await press(page, 'Sign authorization');
    await waitForView(page, 'stored');
    expect(wallet.requests('eth_signTypedData_v4')).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('an 18-decimal token: the amount is formatted in its own decimals, and signing works', async () => {
    const token = network(SECOND).tokens.find((t) => t.decimals === 18);
    if (!token) throw new Error(`no 18-decimal token on chain ${SECOND}: ${JSON.stringify(network(SECOND).tokens)}`);
    const d = await createDraft(payer(3), '1.5', token.symbol);
    expect(d.typedData.message.value).toBe('1500000000000000000');
    const wallet = new ChainsWallet({ account: payer(3), chainId: SECOND, nodes: nodes() });
    const { page, errors } = await openWith(wallet);
    await page.goto(d.checkoutUrl);
    await waitForView(page, 'ready');
    expect(await page.getByTestId('amount').innerText()).toBe(`1.50 ${token.symbol}`);
    expect(await page.getByTestId('network').innerText()).toBe(`${token.symbol} on ${network(SECOND).name}`);
    expect((await page.locator('.explain').innerText()).replace(/\s+/g, ' ')).toContain(`to collect exactly 1.50 ${token.symbol} from your wallet`);
    await shot(page, 'networks', 'eighteen-decimals');

    await press(page, 'Connect wallet');
    await press(page, 'Sign authorization');
    await waitForView(page, 'stored');
    expect((await stateOf(d.id)).state).toBe('stored');
    expect(errors).toEqual([]);
  });
});
