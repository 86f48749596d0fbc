// The payer's checkout link for an authorization, made by an order service that talks to Temporal
// through the typed client (the HTTP API adds `checkoutUrl` to its answers; the library cannot, since
// the link's token is signed with the API's secret). Same token as the API's (runtime/checkoutLinks.ts).
// The secret comes from the caller (its entry reads AUTHCAP_CHECKOUT_SECRET), never from this process's environment.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AuthcapError } from '../domain/errors.js';
import { CheckoutLinks, checkoutSecret } from '../runtime/checkoutLinks.js';

export interface CheckoutLinkOptions {
  /** Where payers reach the API's checkout pages: the API's AUTHCAP_PUBLIC_URL (else its own URL). */
  publicUrl: string;
  /** The API's AUTHCAP_CHECKOUT_SECRET. Absent: the API's state dir file (below). */
  secret?: string | Buffer;
  /** The API's state dir, when the API keeps its secret there (`npm start`: `.authcap`). */
  stateDir?: string;
}

/** `<publicUrl>/checkout/<id>?token=…`: opens this one authorization's checkout page, nothing else. */
export function checkoutLink(id: string, options: CheckoutLinkOptions): string {
  // Never a secret of our own making: a link signed with one the API does not have opens nothing.
  const fromFile = options.stateDir !== undefined && existsSync(join(options.stateDir, 'checkout-secret'));
  if (options.secret === undefined && !fromFile) {
    throw new AuthcapError(
      'validation_error',
      "no checkout secret: pass the API's AUTHCAP_CHECKOUT_SECRET as secret, or stateDir where the API keeps checkout-secret",
    );
  }
  const links = new CheckoutLinks(checkoutSecret({ secret: options.secret, stateDir: fromFile ? options.stateDir : undefined }));
  const base = options.publicUrl.replace(/\/+$/, '');
  return `${base}/checkout/${encodeURIComponent(id)}?token=${links.tokenFor(id)}`;
}
