// Which webhook URLs authcap may call (finding 5: loopback, private and metadata addresses were
// registered and POSTed to for 3 days). Names resolve through a fake resolver; IP literals go as
// the WHATWG parser normalises them.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthcapError } from '../../../domain/errors.js';
import { assertWebhookUrlAllowed } from '../../../client/webhookEndpoints/endpointRequest.js';
import {
  AddressNotAllowedError,
  classifyAddress,
  guardedLookup,
  webhookAddressPolicyFromEnv,
  type Resolver,
  type WebhookAddressPolicy,
} from '../../../runtime/webhookAddressPolicy.js';

const strict: WebhookAddressPolicy = { allowLoopback: false, allowPrivate: false };
const loopbackOk: WebhookAddressPolicy = { allowLoopback: true, allowPrivate: false };
const everythingOk: WebhookAddressPolicy = { allowLoopback: true, allowPrivate: true };

const dnsTable: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'rebind.example.com': ['93.184.216.34', '127.0.0.1'],
  'imds.example.com': ['169.254.169.254'],
  'lan.example.com': ['192.168.1.20'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
  localhost: ['127.0.0.1', '::1'],
  'api.localhost': ['127.0.0.1'],
};
const fakeDns: Resolver = async (host) => {
  const found = dnsTable[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

async function verdict(url: string, policy: WebhookAddressPolicy): Promise<string> {
  try {
    await assertWebhookUrlAllowed(url, policy, fakeDns);
    return 'allowed';
  } catch (err) {
    expect(err).toBeInstanceOf(AuthcapError);
    expect((err as AuthcapError).code).toBe('webhook_url_not_allowed');
    return String((err as AuthcapError).details?.reason);
  }
}

// [url, strict, loopback allowed, loopback and private allowed]
const table: [string, string, string, string][] = [
  ['https://hooks.example.com/authcap', 'allowed', 'allowed', 'allowed'],
  ['https://93.184.216.34/hooks', 'allowed', 'allowed', 'allowed'],
  ['https://[2606:2800:220:1:248:1893:25c8:1946]/hooks', 'allowed', 'allowed', 'allowed'],
  ['http://[::ffff:93.184.216.34]/hooks', 'allowed', 'allowed', 'allowed'],
  ['http://[64:ff9b::93.184.216.34]/hooks', 'allowed', 'allowed', 'allowed'],
  // the probe's spellings of 127.0.0.1
  ['http://127.0.0.1:4000/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://2130706433/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://0x7f.1/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://017700000001/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://127.1/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://0x7f000001/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://0177.0.0.1/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://127.0.0.1./hooks', 'loopback', 'allowed', 'allowed'],
  ['http://①②⑦.0.0.1/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://127.255.255.254/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://[::ffff:127.0.0.1]/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://[0:0:0:0:0:ffff:7f00:1]/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://[::1]/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://localhost:4000/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://api.localhost/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://[64:ff9b::127.0.0.1]/hooks', 'loopback', 'allowed', 'allowed'],
  // metadata and link-local: never, whatever the operator allows
  ['http://169.254.169.254/latest/meta-data/', 'metadata', 'metadata', 'metadata'],
  ['http://[::ffff:169.254.169.254]/', 'metadata', 'metadata', 'metadata'],
  ['http://2852039166/', 'metadata', 'metadata', 'metadata'],
  ['http://169.254.170.2/v2/credentials', 'metadata', 'metadata', 'metadata'],
  ['http://[fd00:ec2::254]/latest/meta-data/', 'metadata', 'metadata', 'metadata'],
  ['http://100.100.100.200/latest/meta-data/', 'metadata', 'metadata', 'metadata'],
  ['http://168.63.129.16/machine', 'metadata', 'metadata', 'metadata'],
  ['http://metadata.google.internal/computeMetadata/v1/', 'metadata-host', 'metadata-host', 'metadata-host'],
  ['http://metadata.google.internal./computeMetadata/v1/', 'metadata-host', 'metadata-host', 'metadata-host'],
  ['http://169.254.1.1/', 'link-local', 'link-local', 'link-local'],
  ['http://[fe80::1]/', 'link-local', 'link-local', 'link-local'],
  ['http://imds.example.com/', 'metadata', 'metadata', 'metadata'],
  // private networks: only when the operator allows them
  ['http://10.0.0.5/hooks', 'private', 'private', 'allowed'],
  ['http://172.16.0.1/hooks', 'private', 'private', 'allowed'],
  ['http://172.31.255.255/hooks', 'private', 'private', 'allowed'],
  ['http://192.168.1.1/hooks', 'private', 'private', 'allowed'],
  ['http://100.64.0.1/hooks', 'private', 'private', 'allowed'],
  ['http://[fd12:3456::1]/hooks', 'private', 'private', 'allowed'],
  ['http://[::ffff:10.0.0.1]/hooks', 'private', 'private', 'allowed'],
  ['http://lan.example.com/hooks', 'private', 'private', 'allowed'],
  ['http://mapped.example.com/hooks', 'private', 'private', 'allowed'],
  // one refused address among good ones refuses the name (a connection may use any of them)
  ['http://rebind.example.com/hooks', 'loopback', 'allowed', 'allowed'],
  // never a receiver
  ['http://0.0.0.0:4000/hooks', 'unspecified', 'unspecified', 'unspecified'],
  ['http://0/hooks', 'unspecified', 'unspecified', 'unspecified'],
  ['http://[::]/hooks', 'unspecified', 'unspecified', 'unspecified'],
  ['http://224.0.0.1/hooks', 'multicast', 'multicast', 'multicast'],
  ['http://[ff02::1]/hooks', 'multicast', 'multicast', 'multicast'],
  ['http://255.255.255.255/hooks', 'reserved', 'reserved', 'reserved'],
  ['http://192.0.2.1/hooks', 'reserved', 'reserved', 'reserved'],
  ['http://[2001:db8::1]/hooks', 'reserved', 'reserved', 'reserved'],
  ['http://[2002:7f00:1::1]/hooks', 'reserved', 'reserved', 'reserved'],
  ['http://[::127.0.0.1]/hooks', 'loopback', 'allowed', 'allowed'],
  ['http://[::8.8.8.8]/hooks', 'reserved', 'reserved', 'reserved'],
  ['http://no-such-host.example.com/hooks', 'unresolvable', 'unresolvable', 'unresolvable'],
];

describe('webhook URL policy', () => {
  it.each(table)('%s → %s / %s / %s', async (url, strictVerdict, loopbackVerdict, privateVerdict) => {
    expect(await verdict(url, strict)).toBe(strictVerdict);
    expect(await verdict(url, loopbackOk)).toBe(loopbackVerdict);
    expect(await verdict(url, everythingOk)).toBe(privateVerdict);
  });

  it('the refusal names the reason, the address and the setting that would allow it', async () => {
    const err = await assertWebhookUrlAllowed('http://0x7f.1:9/x', strict, fakeDns).catch((e: AuthcapError) => e);
    expect(err).toBeInstanceOf(AuthcapError);
    expect((err as AuthcapError).message).toMatch(/127\.0\.0\.1 is a loopback address.*AUTHCAP_WEBHOOK_ALLOW_LOOPBACK=1/);
    expect((err as AuthcapError).details).toMatchObject({ host: '127.0.0.1', address: '127.0.0.1', reason: 'loopback' });
    const viaName = await assertWebhookUrlAllowed('http://imds.example.com/', everythingOk, fakeDns).catch((e: AuthcapError) => e);
    expect((viaName as AuthcapError).message).toMatch(/imds\.example\.com resolves to 169\.254\.169\.254, which is a cloud metadata/);
  });

  it('classifies the edges of each range', () => {
    expect(classifyAddress('126.255.255.255')).toBe('public');
    expect(classifyAddress('128.0.0.0')).toBe('public');
    expect(classifyAddress('172.15.255.255')).toBe('public');
    expect(classifyAddress('172.32.0.0')).toBe('public');
    expect(classifyAddress('100.63.255.255')).toBe('public');
    expect(classifyAddress('100.128.0.0')).toBe('public');
    expect(classifyAddress('169.253.255.255')).toBe('public');
    expect(classifyAddress('8.8.8.8')).toBe('public');
    expect(classifyAddress('::ffff:8.8.8.8')).toBe('public');
    expect(classifyAddress('::ffff:0:7f00:1')).toBe('loopback');
    expect(classifyAddress('fe80::1')).toBe('link-local');
    expect(classifyAddress('febf::1')).toBe('link-local');
    expect(classifyAddress('fec0::1')).toBe('reserved');
    expect(classifyAddress('fd20:ce::254')).toBe('metadata');
    expect(() => classifyAddress('example.com')).toThrow(TypeError);
  });

  it('reads the operator settings from the environment', () => {
    expect(webhookAddressPolicyFromEnv({})).toEqual(strict);
    expect(webhookAddressPolicyFromEnv({ AUTHCAP_WEBHOOK_ALLOW_LOOPBACK: '1' })).toEqual(loopbackOk);
    expect(webhookAddressPolicyFromEnv({ AUTHCAP_WEBHOOK_ALLOW_LOOPBACK: 'true', AUTHCAP_WEBHOOK_ALLOW_PRIVATE: '1' })).toEqual(everythingOk);
    expect(webhookAddressPolicyFromEnv({ AUTHCAP_WEBHOOK_ALLOW_LOOPBACK: '0' })).toEqual(strict);
  });
});

describe('the guarded lookup a delivery connects through', () => {
  let server: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits += 1;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (host: string, policy: WebhookAddressPolicy, resolve: Resolver) =>
    new Promise<number>((done, fail) => {
      const req = request({ host, port, path: '/', agent: false, lookup: guardedLookup(policy, resolve) }, (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      });
      req.on('error', fail);
      req.end();
    });

  it('connects to the address it checked, and refuses a name whose answer turned into a refused address', async () => {
    // The same name: first a public answer (as at registration), then loopback (a rebinding attack).
    let answer = '127.0.0.1';
    const rebinding: Resolver = async () => [{ address: answer, family: 4 }];
    expect(await get('receiver.test', loopbackOk, rebinding)).toBe(200);
    expect(hits).toBe(1);
    const refused = await get('receiver.test', strict, rebinding).catch((err: Error) => err);
    expect(refused).toBeInstanceOf(AddressNotAllowedError);
    answer = '169.254.169.254';
    const metadata = await get('receiver.test', everythingOk, rebinding).catch((err: Error) => err);
    expect(metadata).toBeInstanceOf(AddressNotAllowedError);
    expect((metadata as AddressNotAllowedError).refusal.kind).toBe('metadata');
    expect(hits).toBe(1);
  });

  it('refuses localhost and metadata names before resolving them', async () => {
    let asked = 0;
    const counting: Resolver = async (host) => {
      asked += 1;
      return fakeDns(host);
    };
    expect(await get('localhost', strict, counting).catch((err: Error) => err)).toBeInstanceOf(AddressNotAllowedError);
    expect(await get('metadata.google.internal', everythingOk, counting).catch((err: Error) => err)).toBeInstanceOf(AddressNotAllowedError);
    expect(asked).toBe(0);
    expect(hits).toBe(1);
  });
});
