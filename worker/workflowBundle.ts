// How the workflow bundle is made to run cheaply in the SDK's shared V8 context (reuseV8Context).
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Logger } from '@temporalio/common';

/**
 * The libraries loaded once per worker and shared by every workflow in the context (the bundler's
 * `preloadModules`). Without this, each workflow the worker creates or replays evaluates its own copy
 * of viem, @noble/curves and XState. Only stateless libraries belong here: a shared module is
 * deep-frozen, and state kept in one would leak between workflows. authcap's own modules
 * (workflows/, domain/) stay per workflow.
 */
export const sharedWorkflowModules = ['viem', 'viem/accounts', '@noble/curves/secp256k1', 'xstate'];

/**
 * JavaScript's own constructors and namespaces, which the SDK never swaps per workflow (it swaps
 * Date, timers, Math.random's behaviour through the activator, and what a workflow itself puts on
 * globalThis). Not Date, not Math, not the timers: those stay global lookups.
 */
const INTRINSICS = [
  'Object',
  'Array',
  'Symbol',
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'Promise',
  'JSON',
  'Number',
  'String',
  'Boolean',
  'BigInt',
  'RegExp',
  'Reflect',
  'Proxy',
  'ArrayBuffer',
  'DataView',
  'Uint8Array',
  'Uint16Array',
  'Uint32Array',
  'Int32Array',
  'BigUint64Array',
  'BigInt64Array',
  'Float64Array',
  'parseInt',
  'parseFloat',
  'isNaN',
  'isFinite',
  'encodeURIComponent',
  'decodeURIComponent',
];

/**
 * The bundle with the intrinsics bound lexically around it. In a node:vm context every global
 * identifier the code names (Object, Array, Promise…) is looked up through the context's C++
 * interceptors, ten times slower than a lexical binding; workflow code names them in every
 * transition. The block keeps the bundle's top-level `var __TEMPORAL__` global (a var leaves a block)
 * and adds no line, so the source map still lines up.
 */
export function withLexicalIntrinsics(code: string): string {
  const bindings = INTRINSICS.map((name) => `${name} = globalThis.${name}`).join(', ');
  const mapAt = code.lastIndexOf('\n//# sourceMappingURL=');
  const body = mapAt >= 0 ? code.slice(0, mapAt) : code;
  const map = mapAt >= 0 ? code.slice(mapAt) : '';
  return `{ const ${bindings}; ${body} }${map}`;
}

/** The workflow bundle as authcap runs it: its shared libraries preloaded, its intrinsics bound lexically. */
export async function bundleAuthcapWorkflows(options: {
  workflowsPath: string;
  workflowInterceptorModules: string[];
  logger?: Logger;
}): Promise<{ code: string }> {
  const { code } = await bundleWorkflowCode({ ...options, preloadModules: sharedWorkflowModules });
  return { code: withLexicalIntrinsics(code) };
}
