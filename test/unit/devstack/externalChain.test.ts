// npm start's settings for a chain of the operator's own (their deployment file, AUTHCAP_CONFIG): demo
// payer keys checked without ever echoing one, and a word for each setting that will be ignored.
import { describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import { demoPayersFromEnv, startNotices, usesExternalChain } from '../../../devstack/externalChain.js';

const merchantKey = `0x${'22'.repeat(32)}` as const;
const payerKey = `0x${'33'.repeat(32)}` as const;
const chain = { AUTHCAP_CONFIG: '/etc/authcap/deployment.json', MERCHANT_PRIVATE_KEY: merchantKey };
const merchant = privateKeyToAccount(merchantKey).address;

describe('npm start on an external chain', () => {
  it('is on the chain of a deployment file when one is named, else on anvil', () => {
    expect(usesExternalChain({})).toBe(false);
    expect(usesExternalChain({ AUTHCAP_CONFIG: ' ' })).toBe(false);
    expect(usesExternalChain(chain)).toBe(true);
  });

  it('lists AUTHCAP_DEMO_PAYER_KEYS as payers, once each; refuses a malformed or merchant key without printing it', () => {
    const payer = privateKeyToAccount(payerKey).address;
    expect(demoPayersFromEnv([merchant], { AUTHCAP_DEMO_PAYER_KEYS: ` ${payerKey}, ${payerKey.toUpperCase().replace('0X', '0x')}` })).toEqual([
      { address: payer, privateKey: payerKey },
    ]);
    expect(demoPayersFromEnv([merchant], {})).toEqual([]);
    const secret = `0x${'44'.repeat(31)}`;
    expect(() => demoPayersFromEnv([merchant], { AUTHCAP_DEMO_PAYER_KEYS: `${payerKey},${secret}` })).toThrow(/entry 2 is not/);
    const refused = (() => {
      try {
        demoPayersFromEnv([merchant], { AUTHCAP_DEMO_PAYER_KEYS: secret });
      } catch (err) {
        return err as Error;
      }
    })();
    expect(refused?.message).toMatch(/entry 1 is not/);
    expect(refused?.message).not.toContain(secret.slice(2));
    expect(() => demoPayersFromEnv([merchant], { AUTHCAP_DEMO_PAYER_KEYS: merchantKey })).toThrow(/entry 1 is a merchant key/);
  });

  it('says which settings are ignored, and that dev.json will have no payers without AUTHCAP_DEMO_PAYER_KEYS', () => {
    expect(startNotices({ ...chain, AUTHCAP_RPC_PORT: '9545' })).toEqual([
      'AUTHCAP_RPC_PORT=9545 is ignored: AUTHCAP_CONFIG names the chain, so no anvil is started',
      expect.stringMatching(/^dev\.json will list no payers: set AUTHCAP_DEMO_PAYER_KEYS/),
    ]);
    expect(startNotices({ ...chain, AUTHCAP_DEMO_PAYER_KEYS: payerKey })).toEqual([]);
    expect(startNotices({ AUTHCAP_RPC_PORT: '9545' })).toEqual([]);
    expect(startNotices({ AUTHCAP_DEMO_PAYER_KEYS: payerKey })).toEqual([expect.stringMatching(/ignored on anvil/)]);
    // The dev chain's file settings mean nothing beside the operator's file, which says them per network.
    expect(startNotices({ ...chain, AUTHCAP_DEMO_PAYER_KEYS: payerKey, AUTHCAP_CONFIRMATIONS: '3', AUTHCAP_WS_URL: '' })).toEqual([
      'AUTHCAP_CONFIRMATIONS is ignored on your chain: your deployment file says it per network (confirmations)',
      'AUTHCAP_WS_URL is ignored on your chain: your deployment file says it per network (wsUrl)',
    ]);
  });
});
