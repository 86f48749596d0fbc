// `npx tsx test/bench/profileCategories.ts <worker.cpuprofile> <workflow-bundle.js> [lifecycles]`: a worker profile taken with
// its workflows in the profiled thread (Worker debugMode) summed by what the time is spent on,
// per lifecycle. Bundle code is attributed to its module through the bundle's own module markers.
import { readFileSync } from 'node:fs';
import { selfTimes } from './cpuProfile.js';
const [file, bundlePath] = process.argv.slice(2) as [string, string];
const lines = readFileSync(bundlePath, 'utf8').split('\n');
const moduleAt: string[] = [];
let cur = '';
lines.forEach((l, i) => {
  const m = l.match(/^\/\*\*\*\/ "([^"]+)"/);
  if (m) cur = m[1]!;
  moduleAt[i + 1] = cur;
});
const cat = new Map<string, number>();
let total = 0;
const plumbing =
  /^(runInContext|getActivator|init|formatCallsiteName|cutoffStackTrace|Error\.prepareStackTrace|get stack|maybeCacheGeneratedSourceMap|extractSourceURLMagicComment|__TEMPORAL_CALL_INTO_SCOPE|cutoffStructuredStackTrace|promiseInitHook|promiseBeforeHook|promiseAfterHook|promiseResolveHook|_propagate|lookupPublicResource)$/;
for (const {
  callFrame: { functionName: fn, url, lineNumber },
  ms,
} of selfTimes(file).frames) {
  total += ms;
  let c: string;
  if (url.includes('workflow-bundle')) {
    const mod = moduleAt[lineNumber + 1] ?? '';
    if (fn === '__TEMPORAL_CALL_INTO_SCOPE') c = 'sandbox plumbing: context switches, promise-hook stack traces, source maps';
    else if (/@noble|viem|ox\//.test(mod)) c = 'signer recovery and hashing in the sandbox (noble, viem)';
    else if (/xstate|workflows\/machine/.test(mod)) c = 'XState machine in the sandbox';
    else if (/^\.\/(workflows|domain)\//.test(mod)) c = 'authcap workflow code';
    else c = 'Temporal workflow runtime in the sandbox (payload conversion, activation)';
  } else if (url.includes('source-map') || plumbing.test(fn) || url.includes('vm-shared') || url.includes('reusable-vm'))
    c = 'sandbox plumbing: context switches, promise-hook stack traces, source maps';
  else if (fn === '(garbage collector)') c = 'garbage collection';
  else if (/runtime\/codec|^initiv$|^update$|cipher/.test(url + fn) && !url.includes('workflow')) c = 'payload codec (AES-GCM, JSON, base64)';
  else if (/activities\/|viem|undici|@noble|ox\//.test(url)) c = 'activities and chain I/O (viem, HTTP)';
  else if (/@temporalio\/(worker|common|proto|core-bridge|client)|protobufjs|rxjs|long\//.test(url) || /temporal_sdk/.test(fn))
    c = 'worker ⇄ Temporal core (protobuf, activations, polls)';
  else c = 'other (Node core, timers, logging, metrics)';
  cat.set(c, (cat.get(c) ?? 0) + ms);
}
const n = Number(process.argv[4] ?? 150);
for (const [c, ms] of [...cat].sort((a, b) => b[1] - a[1]))
  console.log(`${(ms / n).toFixed(1).padStart(6)} ms/lifecycle ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${c}`);
console.log(`${(total / n).toFixed(1).padStart(6)} ms/lifecycle total (profiled main thread, workflows in it)`);
