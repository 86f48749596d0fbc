// `authorizations.create`: a draft for the payer to sign, or an authorization the payer signed
// elsewhere (the request carries its signature), checked against what the deployment serves before
// anything starts. The HTTP API's POST /v1/authorizations tells them apart the same way.
import type { AuthorizationResource } from '../../domain/authorization.js';
import { parseAddress } from '../../domain/address.js';
import { selectChain } from '../chainSelection.js';
import { parseAmount, parseOrderId, parsePresigned, parseValidFor } from '../requests.js';
import type { ReadContext } from './readModel.js';
import { holdsFunds } from './holdChoice.js';
import { startAttempt } from './startProtocol.js';
import type { CreateAuthorizationRequest, CreatePresignedRequest } from './types.js';

/** A keyword search attribute is kept whole up to this length; a longer URL is cut (it is for finding, not for proof). */
const MAX_RESOURCE_LENGTH = 1_000;

/** A request carrying a signature (or its signed authorization) is pre-signed; anything else is a draft. */
export function isPresigned(request: CreateAuthorizationRequest | CreatePresignedRequest): request is CreatePresignedRequest {
  const fields = request as Partial<CreatePresignedRequest>;
  return fields?.signature !== undefined || fields?.authorization !== undefined;
}

/** Resolves once the draft's typed data exists, or once the pre-signed authorization is stored. */
export function create(ctx: ReadContext, request: CreateAuthorizationRequest | CreatePresignedRequest): Promise<AuthorizationResource> {
  return isPresigned(request) ? createPresigned(ctx, request) : createDraft(ctx, request);
}

async function createDraft(ctx: ReadContext, request: CreateAuthorizationRequest): Promise<AuthorizationResource> {
  const orderId = parseOrderId(request?.orderId);
  const payer = parseAddress(request?.payer, 'payer');
  const chain = selectChain(ctx.catalog, request ?? {});
  const value = parseAmount(request?.amount, chain?.decimals);
  const validForSeconds = parseValidFor(request?.validForSeconds);
  const hold = holdsFunds(ctx.catalog, request?.hold, chain);
  const input = { orderId, draft: { payer, value: value.toString(), validForSeconds, ...(hold ? { hold } : {}) }, ...(chain ? { chain } : {}) };
  return startAttempt(ctx, { orderId, payer, value, input });
}

/**
 * Stored after checking it against this merchant's token domain and recipient. A
 * TransferWithAuthorization is captured with transferWithAuthorization.
 */
async function createPresigned(ctx: ReadContext, request: CreatePresignedRequest): Promise<AuthorizationResource> {
  const orderId = parseOrderId(request?.orderId);
  const presigned = parsePresigned(request);
  const chain = selectChain(ctx.catalog, request, presigned.domain);
  const value = BigInt(presigned.authorization.value);
  const resource = typeof request.resource === 'string' && request.resource.length > 0 ? request.resource.slice(0, MAX_RESOURCE_LENGTH) : undefined;
  return startAttempt(ctx, {
    orderId,
    payer: presigned.authorization.from,
    value,
    input: { orderId, presigned, ...(chain ? { chain } : {}) },
    ...(resource ? { resource } : {}),
  });
}
