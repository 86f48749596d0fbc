// A resource's capture fields (`amountCapturable`, `captures`, `hold`). A held payment's workflow keeps
// them in its view; a plain authorization's are derived here from its one capture record, outside the
// workflow, so merchants who never hold pay no history bytes for them.
import type { AuthorizationResource, AuthorizationView, CaptureView } from './authorization.js';
import { parseResourceId } from './ids.js';

/** `cap_<first run id>_<n>`: a capture's id, stable across runs and replays. */
export const captureId = (firstRunId: string, sequence: number) => `cap_${firstRunId}_${sequence}`;

/** The view as the resource `id` names it, with its capture fields. */
export function asResource(id: string, view: AuthorizationView): AuthorizationResource {
  if (view.captures && view.amountCapturable !== undefined && view.hold !== undefined)
    return { ...view, id, amountCapturable: view.amountCapturable, captures: view.captures, hold: view.hold };
  return { ...view, id, amountCapturable: view.state === 'stored' ? view.amount : '0', captures: plainCaptures(id, view), hold: null };
}

/** A plain authorization's one capture, once its transaction is known. */
function plainCaptures(id: string, view: AuthorizationView): CaptureView[] {
  const capture = view.capture;
  if (!capture) return [];
  const succeeded = view.state === 'captured';
  return [
    {
      id: captureId(parseResourceId(id)?.runId ?? '', 1),
      amount: capture.amount ?? view.amountCapturing ?? view.amount,
      final: true,
      status: succeeded ? 'succeeded' : 'submitted',
      transactionHash: capture.transactionHash,
      blockNumber: capture.blockNumber,
      failure: null,
      requestedAt: capture.submittedAt ?? capture.confirmedAt ?? '',
      succeededAt: succeeded ? capture.confirmedAt : null,
    },
  ];
}
