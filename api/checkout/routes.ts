// The payer's routes: public (no API key), each checked against the one-authorization link token
// in its handler. A missing or wrong token is 404 not_found, the same answer as for an unknown
// authorization, so a link guesser learns nothing. The token can read that one authorization's
// session, submit its signature (the workflow accepts one only while drafted) and its cancellation
// (only while stored); nothing on /v1 ever accepts it.
import type { AuthorizationResource } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import type { AuthcapClient } from '../../client/authcapClient.js';
import type { ResolvedDeployment } from '../../runtime/deployment/resolve.js';
import type { JsonResponse, RouteContext, Router } from '../router.js';
import { parseWith, type Schemas } from '../schemas.js';
import { buildCheckoutAssets, type CheckoutAssets } from './assets.js';
import { htmlSecurityHeaders, notFoundHtml, pageHtml } from './html.js';
import { CheckoutLinks, checkoutSecret } from '../../runtime/checkoutLinks.js';
import { checkoutSession, TokenInfoCache } from './session.js';

/** The API process's settings for the pages (api/main.ts reads them: AUTHCAP_PUBLIC_URL, AUTHCAP_CHECKOUT_SECRET, AUTHCAP_MERCHANT_NAME). */
export interface CheckoutOptions {
  /** Where payers reach this API (default the API's own listen URL). */
  publicUrl?: string;
  /** The link secret (default `<stateDir>/checkout-secret`, else one of this process's own). */
  secret?: string | Buffer;
  stateDir?: string;
  /** The name payers see (default "Merchant"). */
  merchantName?: string;
}

export interface CheckoutDeps {
  client: AuthcapClient;
  schemas: Schemas;
  rpcUrl?: string;
  /** The networks and tokens served: the page names the network and can add it to the payer's wallet. */
  deployment?: ResolvedDeployment;
  /** The API's own URL once it listens: the default public URL. */
  listenUrl: () => string | undefined;
  options?: CheckoutOptions;
}

export type WithCheckoutLinks<T> = T & { checkoutUrl: string | null; cancelUrl: string | null };

/** How long POST …/cancel waits for the relay before answering 202: the page then follows it live. */
const CANCEL_WAIT_MS = 5_000;
const MAX_ID_LENGTH = 300;

export class Checkout {
  private readonly links: CheckoutLinks;
  private readonly tokens: TokenInfoCache;
  private readonly merchantName: string;
  /** Built once per server; requests wait for it (it takes well under a second). */
  private readonly assets: Promise<CheckoutAssets>;

  constructor(private readonly deps: CheckoutDeps) {
    const options = deps.options ?? {};
    // No environment here: what is not given is the default, never a variable of this process's.
    this.links = new CheckoutLinks(checkoutSecret({ secret: options.secret, stateDir: options.stateDir }));
    this.tokens = new TokenInfoCache(deps.rpcUrl);
    this.merchantName = (options.merchantName ?? '').trim() || 'Merchant';
    this.assets = buildCheckoutAssets();
    // Surfaces on the first page request; never an unhandled rejection at start.
    this.assets.catch(() => undefined);
  }

  private publicBase(): string {
    return (this.deps.options?.publicUrl || this.deps.listenUrl() || '').replace(/\/+$/, '');
  }

  private url(id: string, tail = ''): string {
    return `${this.publicBase()}/checkout/${encodeURIComponent(id)}${tail}?token=${this.links.tokenFor(id)}`;
  }

  /** The resource as /v1 returns it: with the payer's link while there is something for the payer to do. */
  withLinks<T extends AuthorizationResource>(resource: T): WithCheckoutLinks<T> {
    return {
      ...resource,
      checkoutUrl: resource.state === 'drafted' ? this.url(resource.id) : null,
      cancelUrl: resource.state === 'stored' ? this.url(resource.id, '/cancel') : null,
    };
  }

  register(router: Router): void {
    const { client, schemas } = this.deps;
    router
      .on('GET', '/checkout/:id', 'public', (context) => this.page(context, 'page'))
      .on('GET', '/checkout/:id/cancel', 'public', (context) => this.page(context, 'cancel'))
      .on('GET', '/checkout/:id/session', 'public', async (context) => {
        const id = this.authorize(context);
        return this.json(200, await client.authorizations.get(id));
      })
      .on('POST', '/checkout/:id/signature', 'public', async (context) => {
        const id = this.authorize(context);
        const { signature } = parseWith(schemas.signatureBody, context.body, 'the body');
        return this.json(200, await client.authorizations.sign(id, signature));
      })
      .on('POST', '/checkout/:id/cancel', 'public', async (context) => {
        const id = this.authorize(context);
        const { signature } = parseWith(schemas.cancelBody, context.body, 'the body');
        const outcome = await client.authorizations.cancel(id, signature, { waitMs: CANCEL_WAIT_MS });
        return this.json(outcome.settled ? 200 : 202, outcome.authorization);
      })
      .on('GET', '/checkout-assets/:file', 'public', async ({ params }) => {
        const asset = (await this.assets).files.get(params.file!);
        if (!asset) throw new AuthcapError('not_found', 'no such asset');
        return {
          status: 200,
          body: asset.body,
          // Hashed names never change content: cache for a year.
          headers: { 'content-type': asset.contentType, etag: asset.etag, 'cache-control': 'public, max-age=31536000, immutable' },
        };
      });
  }

  /** The id, once the request's token is this authorization's; 404 otherwise. */
  private authorize({ params, target }: RouteContext): string {
    const id = params.id!;
    const unknown = [...target.query.keys()].find((key) => key !== 'token');
    if (unknown) throw new AuthcapError('validation_error', `the query has an unknown field: ${unknown}`, { field: unknown });
    if (!this.opens(id, target)) throw new AuthcapError('not_found', 'no authorization with that id');
    return id;
  }

  /** Whether the request's link token is this authorization's. */
  private opens(id: string, target: RouteContext['target']): boolean {
    return id.length <= MAX_ID_LENGTH && this.links.verify(id, target.query.get('token'));
  }

  private async json(status: number, resource: AuthorizationResource): Promise<JsonResponse> {
    const context = { merchantName: this.merchantName, tokens: this.tokens, catalog: this.deps.deployment?.catalog };
    return { status, body: await checkoutSession(resource, context) };
  }

  private async page({ params, target }: RouteContext, which: 'page' | 'cancel'): Promise<JsonResponse> {
    const assets = await this.assets;
    const base = new URL(this.publicBase() || 'http://localhost').pathname.replace(/\/+$/, '');
    const id = params.id!;
    if (!this.opens(id, target)) {
      return { status: 404, body: notFoundHtml(assets.names, base), headers: htmlSecurityHeaders };
    }
    const title = which === 'cancel' ? 'Cancel an authorization' : 'Authorize a payment';
    return {
      status: 200,
      body: pageHtml(title, { script: assets.names[which], style: assets.names.style, icon: assets.names.icon }, base),
      headers: htmlSecurityHeaders,
    };
  }
}
