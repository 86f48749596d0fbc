// An open authorization waits without reading the chain by itself (the product default): no periodic
// timer, only its deadline. Outside consumption still reaches it, through the log watcher's nudge.
import { describe, expect, it } from 'vitest';
import proto from '@temporalio/proto';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { AuthorizationStateAttribute, OrderIdAttribute, PayerAttribute } from '../../domain/searchAttributes.js';
import { dev, payer, walletSign } from '../support/api.js';
import { asTokenOwner, getAuthorization, sleep, waitForState } from '../support/lifecycle.js';
import { connectTemporal } from '../support/temporal.js';

const EventType = proto.temporal.api.enums.v1.EventType;

describe('an open authorization with periodic checks off (the default)', () => {
  it('sets only its deadline timer while it waits, and still ends canceled when the payer cancels elsewhere', async () => {
    const p = payer(13);
    const temporal = await connectTemporal();
    try {
      const orderId = `idle-${process.pid}-${Date.now()}`;
      const handle = await temporal.workflow.start('authorizationWorkflow', {
        taskQueue: 'authcap',
        workflowId: `authorization-${orderId}`,
        args: [
          { orderId, requestedAt: new Date().toISOString(), draft: { payer: p.address, value: '1000000' }, policyOverrides: { reconcileIntervalSeconds: 0 } },
        ],
        typedSearchAttributes: [
          { key: OrderIdAttribute, value: orderId },
          { key: PayerAttribute, value: p.address },
          { key: AuthorizationStateAttribute, value: 'drafting' },
        ],
      });
      const id = `auth_${Buffer.from(orderId).toString('base64url')}.${handle.firstExecutionRunId}`;
      const drafted = await waitForState(id, 'drafted', 20_000);
      // The suite's other authorizations tick every 2 s; this one must not tick at all.
      await sleep(5_000);
      const timers = async () => (await handle.fetchHistory()).events!.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED).length;
      expect(await timers()).toBe(1);

      // The payer cancels the drafted nonce with their wallet; someone else relays it.
      const cancelSignature = walletSign(
        {
          domain: drafted.typedData.domain,
          primaryType: 'CancelAuthorization',
          types: {
            EIP712Domain: drafted.typedData.types.EIP712Domain,
            CancelAuthorization: [
              { name: 'authorizer', type: 'address' },
              { name: 'nonce', type: 'bytes32' },
            ],
          },
          message: { authorizer: p.address, nonce: drafted.authorization.nonce },
        },
        p.privateKey,
      );
      const receipt = await asTokenOwner((w) =>
        w.writeContract({
          address: dev().tokenAddress,
          abi: tokenAbi,
          functionName: 'cancelAuthorization',
          args: [p.address, drafted.authorization.nonce, cancelSignature],
        }),
      );
      const canceled = await waitForState(id, 'canceled', 20_000);
      expect(canceled.cancellation).toMatchObject({ by: 'onchain', transactionHash: receipt.transactionHash });
      expect((await getAuthorization(id)).state).toBe('canceled');
    } finally {
      await temporal.connection.close();
    }
  }, 60_000);
});
