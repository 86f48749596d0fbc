// The stub chain (test/support/stubChain.ts) with an escrow: a hold's draft has terms, its authorize
// and each part are confirmed with the event the escrow would emit, for the hold's own payment hash.
import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import type { AuthorizationActivities } from '../../domain/activityContract.js';
import { holdAuthorizationMessage, paymentInfoHash } from '../../domain/escrow.js';
import { fromWire, toWire } from '../../domain/escrowCall.js';
import { holdTerms } from '../../domain/hold.js';
import type { EscrowOnchainRequest } from '../../domain/holds.js';
import { DOMAIN, MERCHANT, TOKEN, stubChain, type StubChain } from './stubChain.js';

export const ESCROW = { escrow: '0x0000000000000000000000000000000000000e5c', paymentCollector: '0x0000000000000000000000000000000000000c01' } as const;
const hex32 = (): Hex => `0x${randomBytes(32).toString('hex')}`;

export function stubHoldChain(): StubChain & { escrowCalls: EscrowOnchainRequest[] } {
  const chain = stubChain();
  const escrowCalls: EscrowOnchainRequest[] = [];
  const plainDraft = chain.activities.draftAuthorization!;
  const activities: Partial<AuthorizationActivities> = {
    ...chain.activities,
    async draftAuthorization(request) {
      if (!request.hold) return plainDraft(request);
      const drafted = await plainDraft(request);
      const terms = holdTerms({
        operator: MERCHANT,
        receiver: MERCHANT,
        payer: request.payer,
        token: TOKEN,
        amount: BigInt(request.value),
        authorizeBy: Number(drafted.authorization.validBefore),
        authorizationId: request.hold.authorizationId,
      });
      return {
        ...drafted,
        authorization: holdAuthorizationMessage(terms, DOMAIN.chainId, ESCROW),
        hold: { terms: toWire(terms), paymentInfoHash: paymentInfoHash(terms, DOMAIN.chainId, ESCROW.escrow) },
      };
    },
    async prepareHoldAttempt(request) {
      const { facts } = await chain.activities.prepareCaptureAttempt!(request);
      return { facts, prepared: { status: 'ready' }, fromBlock: '1' };
    },
    async escrowOnchain(request) {
      escrowCalls.push(request);
      const call = request.call;
      const event = { authorize: 'PaymentAuthorized', capture: 'PaymentCaptured', void: 'PaymentVoided', refund: 'PaymentRefunded', allowRefunds: 'Approval' }[
        call.action
      ] as 'PaymentAuthorized';
      const amountMinor = call.action === 'void' ? (call.expect?.capturable ?? '0') : (call.amount ?? '0');
      return {
        paymentInfoHash: paymentInfoHash(fromWire(call.paymentInfo), DOMAIN.chainId, ESCROW.escrow),
        event,
        amountMinor,
        transactionHash: hex32(),
        blockNumber: '3',
        blockHash: hex32(),
        by: 'authcap',
        confirmedAt: new Date().toISOString(),
      };
    },
  };
  return { ...chain, activities, escrowCalls };
}
