// The payer's checkout link for an authorization, made by an order service that talks to Temporal
// through the typed client (the HTTP API adds `checkoutUrl` to its answers; the library cannot, since
// the link's token is signed with the API's secret). Same token as the API's (runtime/checkoutLinks.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AuthcapError } from '../domain/errors.js';
import { CheckoutLinks, checkoutSecret } from '../runtime/checkoutLinks.js';
import { readVariable } from '../runtime/settings/read.js';

export interface CheckoutLinkOptions {
  /** Where payers reach the API's checkout pages: the API's AUTHCAP_PUBLIC_URL (else its own URL). */
  publicUrl: string;
  /** The API's AUTHCAP_CHECKOUT_SECRET. Absent: that variable here, else the API's state dir file (below). */
  secret?: string | Buffer;
  /** The API's state dir, when the API keeps its secret there (`npm start`: `.authcap`). */
  stateDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** `<publicUrl>/checkout/<id>?token=…`: opens this one authorization's checkout page, nothing else. */
export function checkoutLink(id: string, options: CheckoutLinkOptions): string {
  const env = options.env ?? process.env;
  // Never a secret of our own making: a link signed with one the API does not have opens nothing.
  const fromFile = options.stateDir !== undefined && existsSync(join(options.stateDir, 'checkout-secret'));
  if (options.secret === undefined && readVariable('AUTHCAP_CHECKOUT_SECRET', env) === undefined && !fromFile) {
    throw new AuthcapError(
      'validation_error',
      "no checkout secret: set AUTHCAP_CHECKOUT_SECRET to the API's, or pass stateDir where the API keeps checkout-secret",
    );
  }
  const links = new CheckoutLinks(checkoutSecret({ secret: options.secret, stateDir: fromFile ? options.stateDir : undefined, env }));
  const base = options.publicUrl.replace(/\/+$/, '');
  return `${base}/checkout/${encodeURIComponent(id)}?token=${links.tokenFor(id)}`;
}
