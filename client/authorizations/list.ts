// `authorizations.list`: authorizations from Temporal visibility (their search attributes), newest
// first, a page at a time. Each summary is what the attributes say; `get` reads one in full.
import type { temporal as proto } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import { parseAddress } from '../../domain/address.js';
import { FIRST_RUN_MEMO_KEY } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import { resourceId } from '../../domain/ids.js';
import { sealedEntries } from '../../domain/sealed.js';
import {
  AmountMinorAttribute,
  AuthorizationStateAttribute,
  NetworkAttribute,
  OrderIdAttribute,
  PayerAttribute,
  TokenAttribute,
  ValidBeforeAttribute,
} from '../../domain/searchAttributes.js';
import type { Catalog } from '../../runtime/deployment/catalog.js';
import { normalizeNetwork } from '../../runtime/deployment/schema.js';
import { WORKFLOW_TYPE } from '../../workflows/messages.js';
import { selectChain } from '../chainSelection.js';
import { parseOrderId, parseState } from '../requests.js';
import { quote } from '../visibilityQuery.js';
import type { ReadContext } from './readModel.js';
import type { AuthorizationSummary, ListPage, ListRequest } from './types.js';

/** One page; pass its `nextPageToken` back as `pageToken` for the next one. */
export async function list(ctx: ReadContext, request: ListRequest = {}): Promise<ListPage> {
  const { transport } = ctx;
  // Runs that rolled over (continue-as-new) are the same authorization as their successor.
  const clauses = [`WorkflowType = '${WORKFLOW_TYPE}'`, `ExecutionStatus != 'ContinuedAsNew'`];
  const orderId = request.orderId === undefined ? undefined : parseOrderId(request.orderId);
  if (orderId !== undefined) clauses.push(`OrderId = ${quote(orderId)}`);
  const state = parseState(request.state);
  if (state) clauses.push(`AuthorizationState = ${quote(state)}`);
  if (request.payer !== undefined) clauses.push(`Payer = ${quote(parseAddress(request.payer, 'payer'))}`);
  if (request.network !== undefined || request.token !== undefined) clauses.push(...chainClauses(ctx.catalog, request));
  const limit = request.limit ?? 20;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) {
    throw new AuthcapError('validation_error', 'limit must be a whole number from 1 to 100');
  }
  let nextPageToken: Uint8Array | undefined;
  if (request.pageToken !== undefined) {
    if (typeof request.pageToken !== 'string' || !/^[A-Za-z0-9_-]{1,4096}$/.test(request.pageToken)) {
      throw new AuthcapError('validation_error', 'pageToken is not one this API returned');
    }
    nextPageToken = Buffer.from(request.pageToken, 'base64url');
  }
  const response = await transport
    .server(() =>
      transport.temporal.workflowService.listWorkflowExecutions({
        namespace: transport.namespace,
        query: clauses.join(' AND '),
        pageSize: limit,
        nextPageToken,
      }),
    )
    .catch((err: unknown) => {
      if (nextPageToken && err instanceof AuthcapError && err.code === 'internal_error') {
        throw new AuthcapError('validation_error', 'pageToken is not one this API returned');
      }
      throw err;
    });
  const converter = transport.workflow.options.loadedDataConverter;
  const data = await Promise.all(
    (response.executions ?? []).slice(0, limit).map(async (execution) => {
      // Only the first run id is read (the memo also holds the view and the events).
      const firstRun = execution.memo?.fields?.[FIRST_RUN_MEMO_KEY];
      const memo = sealedEntries(await decodeMapFromPayloads(converter, (firstRun ? { [FIRST_RUN_MEMO_KEY]: firstRun } : {}) as never).catch(() => undefined));
      return summaryOf(execution, memo?.[FIRST_RUN_MEMO_KEY] as string | undefined);
    }),
  );
  const token = response.nextPageToken && response.nextPageToken.length > 0 ? Buffer.from(response.nextPageToken).toString('base64url') : null;
  // Visibility's answer is re-checked, as the events feed does: a store that matches loosely
  // (another backend's collation or escaping) must never hand out another order's authorization.
  return { data: orderId === undefined ? data : data.filter((summary) => summary.orderId === orderId), nextPageToken: token };
}

/**
 * List filters by network and token. With the deployment at hand a token may be named by symbol;
 * without it (the CLI given no AUTHCAP_CONFIG) by address only, and the network as given.
 */
function chainClauses(catalog: Catalog | undefined, request: { network?: string; token?: string }): string[] {
  if (catalog) {
    const chain = selectChain(catalog, request);
    return [
      ...(request.network !== undefined ? [`Network = ${quote(chain!.network)}`] : []),
      ...(request.token !== undefined ? [`Token = ${quote(chain!.token.toLowerCase())}`] : []),
    ];
  }
  const network = request.network === undefined ? undefined : normalizeNetwork(request.network);
  if (request.network !== undefined && !network) throw new AuthcapError('validation_error', 'network must be a CAIP-2 network id such as "eip155:8453"');
  return [
    ...(network !== undefined ? [`Network = ${quote(network)}`] : []),
    ...(request.token !== undefined ? [`Token = ${quote(parseAddress(request.token, 'token').toLowerCase())}`] : []),
  ];
}

const fromPayload = (payload: proto.api.common.v1.IPayload | null | undefined): unknown =>
  payload ? defaultPayloadConverter.fromPayload(payload as never) : undefined;

function summaryOf(execution: proto.api.workflow.v1.IWorkflowExecutionInfo, firstRunId?: string): AuthorizationSummary {
  // Search attributes are never encrypted: plain JSON payloads.
  const fields = execution.searchAttributes?.indexedFields ?? {};
  const attr = (name: string) => {
    const value = fromPayload(fields[name]);
    return Array.isArray(value) ? value[0] : value;
  };
  const workflowId = execution.execution?.workflowId ?? '';
  const orderId = (attr(OrderIdAttribute.name) as string | undefined) ?? workflowId.replace(/^authorization-/, '');
  const amount = attr(AmountMinorAttribute.name);
  const validBefore = attr(ValidBeforeAttribute.name) as string | undefined;
  const rawSeconds = execution.startTime?.seconds as unknown;
  const seconds = typeof rawSeconds === 'object' && rawSeconds !== null ? (rawSeconds as { toNumber(): number }).toNumber() : Number(rawSeconds ?? 0);
  return {
    id: resourceId(orderId, firstRunId || execution.firstRunId || execution.execution?.runId || ''),
    orderId,
    state: (attr(AuthorizationStateAttribute.name) as string | undefined) ?? 'unknown',
    payer: (attr(PayerAttribute.name) as string | undefined) ?? null,
    amountMinor: amount === undefined ? null : String(amount),
    validBefore: validBefore ? new Date(validBefore).toISOString() : null,
    network: (attr(NetworkAttribute.name) as string | undefined) ?? null,
    token: (attr(TokenAttribute.name) as string | undefined) ?? null,
    createdAt: new Date(seconds * 1000 + Math.floor(Number(execution.startTime?.nanos ?? 0) / 1e6)).toISOString(),
  };
}
