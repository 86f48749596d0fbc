// A tiny JSON-RPC proxy in front of anvil that can refuse requests (as a provider with a block-range
// limit does) or rewrite results (as a provider without the blockTimestamp extension would), and
// records every request it saw with what it answered.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

interface RpcRequest {
  jsonrpc: '2.0';
  id: number | string | null;
  method: string;
  params?: unknown[];
}

export interface ProxiedCall {
  method: string;
  params: unknown[];
  /** The JSON-RPC error the proxy answered with instead of forwarding, if any. */
  rejected?: { code: number; message: string };
}

export interface ProxyOptions {
  /** Answer with this JSON-RPC error instead of forwarding. */
  reject?: (method: string, params: unknown[]) => { code: number; message: string } | undefined;
  /** Rewrite a forwarded result before it goes back. */
  transformResult?: (method: string, result: unknown) => unknown;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startRpcProxy(target: string, options: ProxyOptions) {
  const calls: ProxiedCall[] = [];

  async function handle(request: RpcRequest): Promise<unknown> {
    const params = request.params ?? [];
    const rejected = options.reject?.(request.method, params);
    calls.push({ method: request.method, params, ...(rejected ? { rejected } : {}) });
    if (rejected) return { jsonrpc: '2.0', id: request.id, error: rejected };
    const res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    const answer = (await res.json()) as { result?: unknown; error?: unknown };
    if (answer.error === undefined && options.transformResult) {
      answer.result = options.transformResult(request.method, answer.result);
    }
    return answer;
  }

  const server = createServer((req, res) => {
    readBody(req)
      .then(async (text) => {
        const body = JSON.parse(text) as RpcRequest | RpcRequest[];
        const answer = Array.isArray(body) ? await Promise.all(body.map(handle)) : await handle(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      })
      .catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** fromBlock and toBlock of an eth_getLogs call, when both are hex numbers. */
export function rangeOf(params: unknown[]): [bigint, bigint] | undefined {
  const filter = params[0] as { fromBlock?: string; toBlock?: string } | undefined;
  if (!filter?.fromBlock?.startsWith('0x') || !filter.toBlock?.startsWith('0x')) return undefined;
  return [BigInt(filter.fromBlock), BigInt(filter.toBlock)];
}
