// A JSON-RPC proxy in front of anvil that misbehaves on demand, as hosted nodes do: HTTP 429/503,
// dropped connections, malformed JSON, stalls — for a fraction of calls or all of them for a while.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = 'http429' | 'http503' | 'drop' | 'malformed' | 'stall';

export interface FaultProxy {
  url: string;
  /** Misbehave with `fault` for `fraction` of requests (1 = all) until cleared. */
  set(fault: Fault, fraction?: number, stallMs?: number): void;
  clear(): void;
  counts: Record<Fault | 'forwarded', number>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  let current: { fault: Fault; fraction: number; stallMs: number } | undefined;
  const counts: FaultProxy['counts'] = { http429: 0, http503: 0, drop: 0, malformed: 0, stall: 0, forwarded: 0 };
  const server = createServer((req, res) => {
    void readBody(req).then(async (body) => {
      const active = current && Math.random() < current.fraction ? current : undefined;
      if (active) {
        counts[active.fault] += 1;
        switch (active.fault) {
          case 'http429':
            return void res.writeHead(429, { 'retry-after': '1' }).end('rate limited');
          case 'http503':
            return void res.writeHead(503).end('unavailable');
          case 'drop':
            return void req.socket.destroy();
          case 'malformed':
            return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":');
          case 'stall':
            await new Promise((r) => setTimeout(r, active.stallMs));
            break;
        }
      }
      counts.forwarded += 1;
      try {
        const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
      } catch {
        req.socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set(fault, fraction = 1, stallMs = 10_000) {
      current = { fault, fraction, stallMs };
    },
    clear() {
      current = undefined;
    },
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
