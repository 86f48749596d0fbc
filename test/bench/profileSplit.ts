// The bench's profile split (`--profile`): a process's CPU profile over the highest-concurrency row
// summed by what the time is spent on, per lifecycle — the payload codec, the interceptors, the
// state machine, secp256k1 (signature checks, the relayer's signing), the relayer, the follower's
// chain reads, the webhook dispatcher, Temporal's SDK, garbage collection. A library frame (viem, Node
// core, native code) is charged to the nearest caller on its stack that owns a part, so viem under
// the relayer counts as the relayer; what no owner claims stays by library. (Native frames of the
// Temporal core bridge carry the nearest exported symbol's name, e.g. `new_metric_counter`: that time
// is Temporal core's work, not metrics.) With
// --profile the worker runs its workflows in the profiled thread (AUTHCAP_PROFILE_WORKFLOWS), so
// workflow code shows; bundle frames are named by the bundle's own module markers.
import { readFileSync } from 'node:fs';

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SplitRow {
  part: string;
  /** CPU ms per lifecycle. */
  ms: number;
  share: number;
}

/** Parts owned by authcap's own code (or one library's sole job): they claim the library frames they call. */
const OWNERS: [string, (f: Frame, module: string) => boolean][] = [
  ['payload codec (AES-GCM, JSON)', (f) => /runtime\/codec\.|codecAuth/.test(f.url)],
  [
    'interceptors (sealed inputs, chain header, tracing)',
    (f, m) => /sealedActivityInputs|chainHeaderInbound|interceptors-opentelemetry/.test(f.url) || /workflows\/(interceptors|sealed)/.test(m),
  ],
  ['state machine (XState)', (f, m) => /\/xstate\//.test(f.url) || /xstate|workflows\/(machine|refundMachine)/.test(m)],
  [
    'secp256k1 and keccak (signature checks, signing)',
    (f, m) =>
      /@noble|tiny-secp256k1|runtime\/secp256k1|signatureRecovery|payerSignature|signatureCheck/.test(f.url) ||
      /@noble|signatureRecovery|signerRecovery/.test(m),
  ],
  ['relayer (nonces, fees, sending)', (f, m) => /activities\/(relayer|relayCalls)|workflows\/relayer/.test(f.url) || /workflows\/relayer/.test(m)],
  [
    'follower (chain reads: pending logs, depth, heads)',
    (f) =>
      /activities\/(captureOnchain|escrowOnchain|refundsOnchain|pendingNonceLog|heartbeat|followedNonces|nonceState)|activities\/rpc\/|worker\/(watcher|chainWatchActivity)/.test(
        f.url,
      ),
  ],
  ['webhook dispatcher (events, HMAC, POST)', (f) => /webhookDispatch|webhookSignature|eventBridges|activities\/events/.test(f.url)],
  ['other activities (verify, precheck, draft)', (f) => /\/activities\//.test(f.url)],
  ['the profiler itself (absent from shipped runs)', (f) => /runtime\/cpuProfiler/.test(f.url)],
];

/** Where a frame no owner claims lands: by library. */
function libraryPart(f: Frame, module: string): string {
  if (f.functionName === '(garbage collector)') return 'garbage collection';
  if (f.functionName === '(program)') return 'V8 (program)';
  // The SDK enters the workflow sandbox through node:vm with a timeout (its isolateExecutionTimeout):
  // each such call starts a watchdog thread, charged here with the context switch itself.
  if (f.functionName === 'runInContext' && !f.url) return 'workflow sandbox entry (node:vm calls, a watchdog thread each)';
  if (/^\.\/(dist\/)?(workflows|domain)\//.test(module) || (/\/(workflows|domain)\//.test(f.url) && !f.url.includes('workflow-bundle')))
    return 'authcap workflow code';
  if (f.url.includes('workflow-bundle') || f.url.startsWith('evalmachine')) {
    return /@temporalio/.test(module) ? 'Temporal SDK (workflow runtime in the sandbox)' : 'workflow sandbox (other)';
  }
  if (/\/(api|client)\//.test(f.url) || /node_modules\/(zod|busboy)\//.test(f.url)) return 'API routes, schemas, client';
  if (/@temporalio|protobufjs|rxjs|\/long\/|@grpc|nexus-rpc/.test(f.url) || /temporal_sdk/.test(f.functionName))
    return 'Temporal SDK (client, worker, core bridge, gRPC)';
  if (/reusable-vm|vm-shared|source-map/.test(f.url)) return 'workflow sandbox (context switches, stack traces)';
  if (/viem|undici|\/ox\//.test(f.url)) return 'chain I/O (viem, HTTP) outside the parts above';
  if (/prom-client|pino|opentelemetry/.test(f.url)) return 'metrics, logs, tracing';
  if (!f.url) return 'native and Node internals (I/O, threads, timers)';
  if (f.url.startsWith('node:')) return 'native and Node internals (I/O, threads, timers)';
  return 'other';
}

/** The module each line of a workflow bundle belongs to (webpack's `/***\/ "<path>"` markers). */
function bundleModules(bundlePath: string | undefined): (line: number) => string {
  if (!bundlePath) return () => '';
  const at: string[] = [];
  let current = '';
  readFileSync(bundlePath, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const marker = text.match(/^\/\*\*\*\/ "([^"]+)"/);
      if (marker) current = marker[1]!;
      at[i] = current;
    });
  return (line) => at[line] ?? '';
}

/**
 * The split of these profiles' CPU, per lifecycle (`lifecycles` completed while they ran), largest
 * first. `bundlePath`: the workflow bundle the worker ran, to name sandbox frames.
 */
export function profileSplit(files: string[], lifecycles: number, bundlePath?: string): SplitRow[] {
  const moduleAt = bundleModules(bundlePath);
  const totals = new Map<string, number>();
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
    const owner = new Map<number, string | null>();
    const ownerOf = (id: number): string | null => {
      if (owner.has(id)) return owner.get(id)!;
      const frame = nodes.get(id)!.callFrame;
      const module = frame.url.includes('workflow-bundle') ? moduleAt(frame.lineNumber) : '';
      const own = OWNERS.find(([, claims]) => claims(frame, module))?.[0];
      const up = parent.get(id);
      const found = own ?? (up === undefined ? null : ownerOf(up));
      owner.set(id, found);
      return found;
    };
    profile.samples.forEach((id, i) => {
      const frame = nodes.get(id)!.callFrame;
      if (frame.functionName === '(idle)') return;
      const ms = (profile.timeDeltas[i] ?? 0) / 1000;
      const part =
        frame.functionName === '(garbage collector)'
          ? 'garbage collection'
          : (ownerOf(id) ?? libraryPart(frame, frame.url.includes('workflow-bundle') ? moduleAt(frame.lineNumber) : ''));
      totals.set(part, (totals.get(part) ?? 0) + ms);
    });
  }
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  const round = (n: number) => Math.round(n * 100) / 100;
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .map(([part, ms]) => ({ part, ms: round(ms / Math.max(1, lifecycles)), share: round((100 * ms) / (all || 1)) }));
}

// `npx tsx test/bench/profileSplit.ts <lifecycles> [--bundle dist/workflow-bundle.js] <file.cpuprofile>...`: the split of profiles taken by hand.
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const bundleAt = args.indexOf('--bundle');
  const bundle = bundleAt >= 0 ? args.splice(bundleAt, 2)[1] : undefined;
  const [n, ...files] = args;
  for (const row of profileSplit(files, Number(n), bundle))
    console.log(`${row.ms.toFixed(2).padStart(7)} ms ${row.share.toFixed(1).padStart(5)}%  ${row.part}`);
}
