// What the worker reports at its /metrics endpoint (AUTHCAP_WORKER_METRICS_PORT): the JSON-RPC calls
// it made, by method (summed over its networks, or of one network when named). Read before and after
// a phase; the difference is what the phase cost the node, the watcher and every background read included.

export async function rpcCallsByMethod(metricsUrl: string, network?: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const out: Record<string, number> = {};
  for (const match of text.matchAll(/^authcap_rpc_calls_total\{network="([^"]+)",method="([^"]+)"\} (\d+(?:\.\d+)?)$/gm)) {
    if (network && match[1] !== network) continue;
    out[match[2]!] = (out[match[2]!] ?? 0) + Number(match[3]);
  }
  return out;
}
