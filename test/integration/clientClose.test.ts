// Closing a client while calls our own clock gave up on are still retrying inside the gRPC library
// (Temporal cut off): the close waits for them, so no retry timer fires on a closed channel and
// throws "Channel has been shut down" as an uncaught exception (it once failed CI this way).
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AuthcapClient } from '../../client/authcapClient.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { dev } from '../support/api.js';

describe('AuthcapClient.close with Temporal unreachable', () => {
  it('leaves no gRPC retry behind to throw on the closed channel', async () => {
    const [host, port] = dev().temporalAddress.split(':');
    const sockets = new Set<Socket>();
    const proxy = createServer((inbound) => {
      const outbound = connect(Number(port), host);
      sockets.add(inbound).add(outbound);
      inbound.pipe(outbound).pipe(inbound);
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const client = await AuthcapClient.connect(
      loadTemporalSettings({ address: `127.0.0.1:${(proxy.address() as { port: number }).port}`, namespace: dev().temporalNamespace }),
    );
    await client.authorizations.list({ limit: 1 });
    proxy.close();
    for (const socket of sockets) socket.destroy();

    const uncaught: unknown[] = [];
    const record = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', record);
    try {
      await expect(client.authorizations.list({ limit: 1 })).rejects.toMatchObject({ code: 'temporal_unavailable' });
      await client.close();
      // The library's longest backoff is about 6 s: any retry left behind would have fired by now.
      await new Promise((r) => setTimeout(r, 7_000));
      expect(uncaught.map(String)).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
    }
  }, 30_000);
});
