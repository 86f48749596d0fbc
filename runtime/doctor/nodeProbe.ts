// Why a node or a webhook receiver does not answer, in words: viem says only "HTTP request failed",
// fetch says "fetch failed"; the reason (refused, unknown host, no answer in time) is in the cause.
import { CALL_TIMEOUT_MS } from './report.js';

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now (DNS)',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is for another name',
};

/** The plain reason a request failed: the deepest cause's code, a timeout, or its message. */
export function reasonOf(err: unknown): string {
  let cause: unknown = err;
  for (let depth = 0; depth < 5 && cause; depth++) {
    const e = cause as { code?: string; name?: string; message?: string; cause?: unknown };
    if (e.name === 'TimeoutError' || e.name === 'TimedOut') return 'no answer in time';
    if (e.code && REASONS[e.code]) return REASONS[e.code]!;
    if (!e.cause) return e.code ? `${e.code}: ${e.message}` : (e.message ?? String(cause)).split('\n')[0]!;
    cause = e.cause;
  }
  return String(err);
}

/**
 * Posts eth_chainId once, bounded, to name why a node did not answer: refused, unknown host, an HTTP
 * status (a provider refusing its key answers 401/403), or no answer in time.
 */
export async function whyNodeFails(url: string, ms = CALL_TIMEOUT_MS): Promise<string> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(ms),
    });
    await res.body?.cancel();
    return res.ok ? 'it answered, but not as a JSON-RPC node' : `it answered HTTP ${res.status} ${res.statusText}`.trim();
  } catch (err) {
    return reasonOf(err);
  }
}

/** Provider URLs carry API keys in their path or query: lines show the scheme and host only. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'the configured URL';
  }
}
