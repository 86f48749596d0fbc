// `client.refunds`: one method per action, each in its own file beside this one. The HTTP API's
// handlers call these same methods.
import type { Refund } from '../../domain/refunds.js';
import { create, type RefundsContext } from './create.js';
import { get } from './get.js';
import { list } from './list.js';
import type { RefundOptions, RefundOutcome, RefundRequest } from './types.js';

export class Refunds {
  constructor(private readonly ctx: RefundsContext) {}

  /**
   * Gives money back from a captured authorization (all that is left when no amount is given).
   * Resolves once the refund is final, or after `waitMs` with it pending (`settled: false`).
   */
  create(authorizationId: string, request: RefundRequest = {}, options: RefundOptions = {}): Promise<RefundOutcome> {
    return create(this.ctx, authorizationId, request, options);
  }

  get(refundId: string): Promise<Refund> {
    return get(this.ctx, refundId);
  }

  /** The authorization's refunds, oldest first (a partial capture's release first). */
  list(authorizationId: string): Promise<Refund[]> {
    return list(this.ctx, authorizationId);
  }
}
