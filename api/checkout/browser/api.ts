// The checkout pages' calls to the API: the session read and the two signature posts. The link
// token travels as ?token= on every call, as it came in the page's own URL.
import type { CheckoutSession } from '../sessionTypes.js';

export interface CheckoutLink {
  /** Whatever path the API is served under ('' at the root; '/pay' behind a prefix). */
  root: string;
  id: string;
  token: string;
}

/** An API answer with an error: its stable code drives what the page says. */
export class ApiProblem extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The link from the page's own location: …/checkout/{id}[/cancel]?token=… */
export function linkFrom(pathname: string, search: string): CheckoutLink | undefined {
  const match = /^(.*)\/checkout\/([^/]+)(?:\/cancel)?\/?$/.exec(pathname);
  const token = new URLSearchParams(search).get('token');
  if (!match || !token) return undefined;
  return { root: match[1]!, id: decodeURIComponent(match[2]!), token };
}

export const checkoutPath = (link: CheckoutLink, tail = ''): string =>
  `${link.root}/checkout/${encodeURIComponent(link.id)}${tail}?token=${encodeURIComponent(link.token)}`;

async function call(link: CheckoutLink, method: 'GET' | 'POST', tail: string, body?: unknown): Promise<CheckoutSession> {
  let res: Response;
  try {
    res = await fetch(checkoutPath(link, tail), {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      // The link token is the only credential: no cookies go along.
      credentials: 'omit',
    });
  } catch {
    throw new ApiProblem('network', 'The payment service cannot be reached. Check your connection.', 0);
  }
  const answer = (await res.json().catch(() => undefined)) as { error?: { code?: string; message?: string } } | undefined;
  if (!res.ok) {
    throw new ApiProblem(answer?.error?.code ?? 'internal_error', answer?.error?.message ?? `the service answered ${res.status}`, res.status);
  }
  return answer as CheckoutSession;
}

export const loadSession = (link: CheckoutLink) => call(link, 'GET', '/session');
export const submitSignature = (link: CheckoutLink, signature: string) => call(link, 'POST', '/signature', { signature });
export const submitCancellation = (link: CheckoutLink, signature: string) => call(link, 'POST', '/cancel', { signature });
