// What the worker reports at its /metrics endpoint (AUTHCAP_WORKER_METRICS_PORT): the JSON-RPC calls
// it made, by method. Read before and after a phase; the difference is what the phase cost the node,
// the watcher and every background read included.

export async function rpcCallsByMethod(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const out: Record<string, number> = {};
  for (const match of text.matchAll(/^authcap_rpc_calls_total\{method="([^"]+)"\} (\d+(?:\.\d+)?)$/gm)) {
    out[match[1]!] = Number(match[2]);
  }
  return out;
}
