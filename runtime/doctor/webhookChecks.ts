// The doctor's webhook checks: each registered endpoint's URL is one the worker may call (the same
// address policy deliveries use) and something answers there. A receiver that is down is a warning,
// not a failure: deliveries are retried for days and payments do not wait for them.
import type { WebhookEndpoint } from '../../domain/events.js';
import { checkDestination, type WebhookAddressPolicy } from '../webhookAddressPolicy.js';
import { reasonOf } from './nodeProbe.js';
import { CALL_TIMEOUT_MS, check, type DoctorCheck } from './report.js';

export async function webhookChecks(endpoints: WebhookEndpoint[], policy: WebhookAddressPolicy): Promise<DoctorCheck[]> {
  if (endpoints.length === 0) return [check('ok', 'webhook', 'endpoints', 'none registered (the events feed still has every event)')];
  return Promise.all(endpoints.map((endpoint) => endpointCheck(endpoint, policy)));
}

async function endpointCheck(endpoint: WebhookEndpoint, policy: WebhookAddressPolicy): Promise<DoctorCheck> {
  const subject = `${endpoint.id} ${endpoint.url}`;
  const url = new URL(endpoint.url);
  const refused = await checkDestination(url, policy);
  if (refused)
    return check(
      'warn',
      'webhook',
      subject,
      `deliveries are refused: ${refused.message}`,
      refused.kind === 'unresolvable'
        ? 'check the host name (or delete the endpoint: authcap webhooks delete)'
        : 'register a public URL, or allow the range (AUTHCAP_WEBHOOK_ALLOW_LOOPBACK / _PRIVATE) on the workers',
    );
  try {
    // HEAD carries no event: a receiver answers it (often 404 or 405) without acting on anything.
    const res = await fetch(url, { method: 'HEAD', redirect: 'manual', signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    await res.body?.cancel();
    return check('ok', 'webhook', subject, `answers (HEAD: HTTP ${res.status})`);
  } catch (err) {
    return check(
      'warn',
      'webhook',
      subject,
      `does not answer (${reasonOf(err)}): events wait and are retried for 3 days`,
      'bring the receiver up, or delete the endpoint (authcap webhooks delete)',
    );
  }
}
