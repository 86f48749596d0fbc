// Checkout link tokens: stateless and scoped to one authorization, so nothing is stored per link and
// every API process on a host that shares the secret accepts the same links. The API's checkout pages
// check them (api/checkout/), and an order service makes them with the typed client (client/checkoutLink.ts).
//   token = base64url(HMAC-SHA256(secret, "authcap-checkout:v1:" + resourceId))
// The token only opens the payer's pages of that one authorization (view, sign while drafted,
// cancel while stored); it never authenticates anything on /v1.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CONTEXT = 'authcap-checkout:v1:';
/** 32 bytes of HMAC in base64url, unpadded. */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;
const SECRET_FILE = 'checkout-secret';

export class CheckoutLinks {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new Error('the checkout link secret must be at least 32 bytes');
  }

  tokenFor(id: string): string {
    return createHmac('sha256', this.secret)
      .update(CONTEXT + id, 'utf8')
      .digest('base64url');
  }

  /**
   * Whether `presented` is this authorization's token. Compared as text, not decoded bytes: base64url
   * decoding ignores the spare bits of the last character, so a tampered spelling could decode to
   * the same bytes. Constant time, so a guesser learns nothing from timing.
   */
  verify(id: string, presented: unknown): boolean {
    if (typeof presented !== 'string' || !TOKEN_FORMAT.test(presented)) return false;
    return timingSafeEqual(Buffer.from(presented, 'ascii'), Buffer.from(this.tokenFor(id), 'ascii'));
  }
}

export interface CheckoutSecretSource {
  /** An explicit secret: the process's AUTHCAP_CHECKOUT_SECRET (at least 32 characters), or a test's. */
  secret?: string | Buffer;
  /** Where `checkout-secret` is kept when no secret is given. */
  stateDir?: string;
}

/**
 * The secret, in this order: an explicit one (the entry passes AUTHCAP_CHECKOUT_SECRET), the file
 * `<stateDir>/checkout-secret` (32 random bytes, created 0600 on first use, like the dev codec keys),
 * else a random one for this process only (an API embedded without a state dir: its links live as
 * long as it does).
 */
export function checkoutSecret(source: CheckoutSecretSource = {}): Buffer {
  if (source.secret !== undefined && source.secret !== '') return Buffer.isBuffer(source.secret) ? source.secret : Buffer.from(source.secret, 'utf8');
  if (source.stateDir) return secretFile(source.stateDir);
  return randomBytes(32);
}

function secretFile(stateDir: string): Buffer {
  const file = join(stateDir, SECRET_FILE);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  if (!existsSync(file)) {
    // Written aside, then linked into place (which fails if the file exists): two API processes
    // starting together end up with one secret, and nobody reads a half-written file.
    const staging = `${file}.${process.pid}.tmp`;
    writeFileSync(staging, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
    try {
      linkSync(staging, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(staging, { force: true });
    }
  }
  chmodSync(file, 0o600);
  const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  if (secret.length !== 32)
    throw new Error(`${file} does not hold a 32-byte base64url secret; delete it to make a new one (existing checkout links stop working)`);
  return secret;
}
