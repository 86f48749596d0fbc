import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { authorizationMachine } from '../../../workflows/machine.js';
import { machineToMermaid, withDiagram } from '../../../workflows/diagram.js';

describe('the state diagram in docs/lifecycle.md', () => {
  it('is the one generated from the machine (run `npm run diagram` when this fails)', () => {
    const page = readFileSync(new URL('../../../docs/lifecycle.md', import.meta.url), 'utf8');
    expect(page).toContain('```mermaid\nstateDiagram-v2');
    expect(withDiagram(page, machineToMermaid(authorizationMachine))).toBe(page);
  });

  it('shows every state and every guarded capture decision', () => {
    const diagram = machineToMermaid(authorizationMachine);
    for (const state of ['drafting', 'drafted', 'stored', 'capturing', 'canceling', 'captured', 'canceled', 'voided', 'expired', 'rejected']) {
      expect(diagram).toContain(state);
    }
    expect(diagram).toContain('stored_prechecking --> capturing: PRECHECKED [nonceIsUnused and tokenPolicyAllows');
    expect(diagram).toContain('capturing --> expired: CAPTURE_FAILED [captureFailedBecauseExpired]');
  });
});
