// `npm run build`: compiles the product to dist/ (tsc) and bundles the workflows once
// (dist/workflow-bundle.js, which the worker loads instead of running webpack at start).
// `--if-stale`: does nothing when dist/ is already a build of the current sources (npm start, npm test).
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildIsFresh, buildStamp, distDir, root } from '../devstack/build.js';
import { bundleAuthcapWorkflows } from '../worker/workflowBundle.js';

if (process.argv.includes('--if-stale') && buildIsFresh()) process.exit(0);
const started = performance.now();
process.stderr.write('authcap: building dist/ (tsc, workflow bundle)…\n');
rmSync(buildStamp, { force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
// The checkout pages' browser code is bundled by the API at start (esbuild): it travels as source.
cpSync(join(root, 'api/checkout/browser'), join(distDir, 'api/checkout/browser'), { recursive: true });
const quiet = { trace() {}, debug() {}, info() {}, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m), log() {} };
const { code } = await bundleAuthcapWorkflows({
  workflowsPath: join(distDir, 'workflows/index.js'),
  // Every input a workflow acts on must be sealed by the payload codec; writes coalesced where switched on (workflows/interceptors.ts).
  workflowInterceptorModules: [join(distDir, 'workflows/interceptors.js')],
  logger: quiet as never,
});
writeFileSync(join(distDir, 'workflow-bundle.js'), code);
writeFileSync(buildStamp, `${new Date().toISOString()}\n`);
process.stderr.write(`authcap: built dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
