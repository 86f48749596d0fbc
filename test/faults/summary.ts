// Prints the fault suite's audit totals last, after every case has run.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR } from './audit.js';

export function setup(): void {
  rmSync(RESULTS_DIR, { recursive: true, force: true });
}

export function teardown(): void {
  const file = join(RESULTS_DIR, 'results.jsonl');
  const rows = existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, number | string>)
    : [];
  const total = (key: string) => rows.reduce((sum, r) => sum + Number(r[key] ?? 0), 0);
  console.log('\nfault suite audit');
  for (const r of rows)
    console.log(
      `  ${String(r.case).padEnd(22)} audited ${r.audited}, lost ${r.lost}, captured twice ${r.capturedTwice}, stuck ${r.stuck}, nonce gaps ${r.nonceGaps}`,
    );
  console.log(`  audited ${total('audited')} authorizations`);
  console.log(`lost ${total('lost')}, captured twice ${total('capturedTwice')}, stuck ${total('stuck')}, merchant nonce gaps ${total('nonceGaps')}`);
}
