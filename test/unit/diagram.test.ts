import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { authorizationMachine } from '../../workflows/machine.js';
import { machineToMermaid, withDiagram } from '../../workflows/diagram.js';

describe('the README state diagram', () => {
  it('is the one generated from the machine (run `npm run diagram` when this fails)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(withDiagram(readme, machineToMermaid(authorizationMachine))).toBe(readme);
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
