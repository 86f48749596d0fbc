// `client.authorizations`: one method per action, each in its own file beside this one. The HTTP
// API's handlers call these same methods.
import type { AuthorizationResource } from '../../domain/authorization.js';
import type { ScreenContext } from './abuseScreen.js';
import { cancel } from './cancel.js';
import { capture } from './capture.js';
import { create } from './create.js';
import { get } from './get.js';
import { idForOrder } from './idForOrder.js';
import { list } from './list.js';
import { sign } from './sign.js';
import type {
  CancelOptions,
  CaptureOptions,
  CaptureOutcome,
  CreateAuthorizationRequest,
  CreatePresignedRequest,
  ListPage,
  ListRequest,
  VoidRequest,
  WaitOptions,
} from './types.js';
import { voidAuthorization } from './void.js';
import { wait, type WaitContext } from './wait.js';

export type AuthorizationsContext = ScreenContext & WaitContext;

export class Authorizations {
  constructor(private readonly ctx: AuthorizationsContext) {}

  /**
   * Drafts an authorization for the payer to sign (resolves once its typed data exists), or, given a
   * signature, stores one the payer signed elsewhere after checking it against this merchant's token
   * domain and recipient.
   */
  create(request: CreateAuthorizationRequest | CreatePresignedRequest): Promise<AuthorizationResource> {
    return create(this.ctx, request);
  }

  /** The authorization as it stands, from its workflow's memo: it answers while every worker is down. */
  get(id: string): Promise<AuthorizationResource> {
    return get(this.ctx, id);
  }

  /** Authorizations from Temporal visibility, newest first, one page at a time. */
  list(request: ListRequest = {}): Promise<ListPage> {
    return list(this.ctx, request);
  }

  /** Stores the payer's signature over the draft's typed data, after checking it. */
  sign(id: string, signature: string): Promise<AuthorizationResource> {
    return sign(this.ctx, id, signature);
  }

  /** Captures now (less with `amount`); `settled: false` once `waitMs` passed with the capture still under way. */
  capture(id: string, options: CaptureOptions = {}): Promise<CaptureOutcome> {
    return capture(this.ctx, id, options);
  }

  /** Relays the payer's CancelAuthorization signature; `settled: false` once `waitMs` passed with it still under way. */
  cancel(id: string, signature: string, options: CancelOptions = {}): Promise<CaptureOutcome> {
    return cancel(this.ctx, id, signature, options);
  }

  /** Voids offchain: authcap never submits this authorization afterwards. */
  void(id: string, request: VoidRequest): Promise<AuthorizationResource> {
    return voidAuthorization(this.ctx.transport, id, request);
  }

  /** The authorization once its state differs from `state` (default: its state now), or after `waitSeconds` (at most 30). */
  wait(id: string, options: WaitOptions): Promise<AuthorizationResource> {
    return wait(this.ctx, id, options);
  }

  /** The id of the order's newest attempt, open or not. */
  idForOrder(orderId: string): Promise<string> {
    return idForOrder(this.ctx.transport, orderId);
  }
}
