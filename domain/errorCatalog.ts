// What each stable error code means and what to do about it: the text of docs/errors.md
// (`npm run docs:errors`) and of the error table on the API reference page (/docs). Typed by
// ErrorCode, so a new code in domain/errors.ts does not compile until it is explained here.
//
// Codes reach callers three ways, all with these meanings: as an HTTP answer
// `{"error":{"code","message","details"}}`, as an authorization's `lastError` (a capture or
// cancellation attempt that failed and left it resting), and as a refund's `failure` or `lastError`.
import type { ErrorCode } from './errors.js';
import { MAX_WEBHOOK_ENDPOINTS } from './events.js';
import { MAX_REFUNDS_PER_AUTHORIZATION } from './refunds.js';
import { MAX_CAPTURES_PER_HOLD } from './holds.js';

/**
 * When the same request may succeed if sent again. A closed set, so every code's advice reads the
 * same way in the docs and on the page.
 */
export const retryAdvice = {
  never: 'Sending the same request again gets the same answer.',
  'after fixing the request': 'Change what the request sends (body, query, path, headers or key), then send it.',
  'after Retry-After': 'Send the same request (with the same Idempotency-Key) after the seconds in the Retry-After header.',
  'after a short wait': 'Send the same request (with the same Idempotency-Key) after a second or two; there is no Retry-After header.',
  'once the cause is fixed':
    'The same request can succeed once something outside it changes (a balance, the token, a setting); send it with a new Idempotency-Key, since a 4xx answer is replayed for 24 h.',
  'after reading the authorization': 'Read the authorization (or refund) first: what happened meanwhile decides what to send next.',
} as const;

export type RetryAdvice = keyof typeof retryAdvice;

export interface ErrorExplanation {
  /** When authcap answers with this code, precisely. */
  meaning: string;
  /** What the caller (order service, payer, operator) should do. */
  whatToDo: string;
  retry: RetryAdvice;
}

export const errorCatalog: Record<ErrorCode, ErrorExplanation> = {
  validation_error: {
    meaning:
      'The request is malformed: a body field, query parameter or path fails its schema (`details.field` names it), the body is not JSON, ' +
      'an unknown query field was sent, the Idempotency-Key is not 1 to 255 printable ASCII characters, or the request target itself ' +
      'is refused (not a plain path, `.`/`..` segments, a bad percent-escape, longer than 4096 characters).',
    whatToDo: 'Read `message` and `details.field`, fix that part of the request and send it again. The OpenAPI document (/docs) has every schema.',
    retry: 'after fixing the request',
  },
  unauthorized: {
    meaning:
      'No API key, or one authcap does not know (revoked, mistyped), on a route that needs one. Every route but the probes, the docs and ' +
      "the payer's checkout pages needs a key; without one even an unknown path answers 401.",
    whatToDo:
      'Send `Authorization: Bearer <key>`. An operator makes keys with `authcap keys create --role order-service` (or `--role operator`, or `--role facilitator` for an x402 resource server).',
    retry: 'after fixing the request',
  },
  forbidden: {
    meaning:
      'The key is valid but its role may not call this route: an `operator` key cannot move money or change endpoints (create, sign, capture, cancel, refund, webhook endpoints); those take an `order-service` key; a `facilitator` key may only call `/x402/verify`, `/x402/settle` and `/x402/supported`.',
    whatToDo: 'Call with an `order-service` key, or leave the action to the order service.',
    retry: 'after fixing the request',
  },
  not_found: {
    meaning:
      'No such route, authorization, refund, event or webhook endpoint, or a checkout link whose token does not open that authorization ' +
      '(the same answer whether or not the authorization exists, so links cannot be guessed).',
    whatToDo: 'Check the id (authorization ids are `auth_…`, refunds `ref_…`) and the path. A payer should open the link exactly as the merchant sent it.',
    retry: 'never',
  },
  method_not_allowed: {
    meaning: 'The path exists but not with this HTTP method (for example GET on …/capture).',
    whatToDo: 'Use the method the reference lists for this path.',
    retry: 'after fixing the request',
  },
  invalid_state: {
    meaning:
      'The authorization is not in a state where this command applies: it is final (captured, canceled, voided, expired, rejected), it became ' +
      'something else while the command ran, a capture asks for another amount than the one already under way, or refunds are asked of one ' +
      'that is not captured or whose refund window (AUTHCAP_REFUND_WINDOW_DAYS after capture) has closed. Also a webhook endpoint past the ' +
      `limit of ${MAX_WEBHOOK_ENDPOINTS} (delete one first).`,
    whatToDo: 'Read the authorization (`GET /v1/authorizations/{id}`): its `state` and `history` say what happened; act on that instead.',
    retry: 'after reading the authorization',
  },
  order_has_open_authorization: {
    meaning: 'This orderId already has an authorization that is not final; an order has at most one open at a time. `details.id` names it.',
    whatToDo: 'Use the open authorization (`details.id`), or void it (`POST …/void`) before creating a new one for the order.',
    retry: 'after reading the authorization',
  },
  order_already_captured: {
    meaning: "The order's earlier authorization was captured: a new one would charge the payer twice. `details.id` names the captured one.",
    whatToDo: 'Treat the order as paid (see `details.id`). For money back, refund that authorization; never start a second one.',
    retry: 'never',
  },
  nonce_already_held: {
    meaning:
      'A pre-signed authorization whose (payer, nonce) authcap already holds for another authorization: it was drafted by authcap for another order, ' +
      'or stored for another order first.',
    whatToDo:
      'Submit the signature to the authorization it was drafted for (`POST …/{id}/signature`), or have the payer sign a new authorization for this order.',
    retry: 'never',
  },
  idempotency_key_reused: {
    meaning: 'This Idempotency-Key was used by this API key with a different request (another path or body), or for a different refund.',
    whatToDo: 'Use a new key for a new request; repeat a request only with exactly the same path and body.',
    retry: 'after fixing the request',
  },
  idempotency_key_in_use: {
    meaning: 'A request with this Idempotency-Key is still being processed (or its process died and its claim has not gone stale yet).',
    whatToDo: "Wait and send the same request with the same key: it then gets the first request's answer, or runs once if that one never finished.",
    retry: 'after a short wait',
  },
  payload_too_large: {
    meaning: 'The request body is larger than 16 KiB.',
    whatToDo: 'Send a smaller body: no authcap request needs more.',
    retry: 'after fixing the request',
  },
  unsupported_media_type: {
    meaning: 'A request with a body whose Content-Type is not application/json (a POST without any body needs none).',
    whatToDo: 'Send the body as JSON with `Content-Type: application/json`.',
    retry: 'after fixing the request',
  },
  rate_limited: {
    meaning:
      'Too many requests: per API key (AUTHCAP_RATE_LIMIT) or per client address on public routes (AUTHCAP_PUBLIC_RATE_LIMIT), too many open ' +
      'long polls (AUTHCAP_MAX_WAITS_PER_KEY, AUTHCAP_MAX_WAITS), too many concurrent requests at one authorization, or a busy events feed. Nothing was done.',
    whatToDo: 'Wait the Retry-After seconds and send the same request. To follow many authorizations, take webhooks or the events feed instead of long polls.',
    retry: 'after Retry-After',
  },
  too_many_attempts: {
    meaning:
      'This authorization has had 5 failed attempts of one command (signatures, cancellations or captures): each further attempt of it ' +
      "waits out a 60 s cool-down after the last failure. The payer's own ECDSA signature is never refused this way.",
    whatToDo: 'Stop retrying in a loop: fix why the attempts fail (the `lastError` of the authorization says), then try once after Retry-After.',
    retry: 'after Retry-After',
  },
  invalid_signature: {
    meaning:
      "The signature is not the payer's over this authorization's typed data (or cancellation), checked locally for an ordinary account and by " +
      'the chain for a contract wallet (ERC-1271); a malformed signature too. Also a capture the token reverted with "invalid signature". The draft is unchanged.',
    whatToDo: 'Have the payer sign exactly the `typedData` of the resource (eth_signTypedData_v4) with the account in `payer`, then send that signature.',
    retry: 'after fixing the request',
  },
  insufficient_balance: {
    meaning:
      "The payer's token balance is below the authorized amount: found by the capture precheck (nothing sent) or named by the token's revert. " +
      'The authorization stays `stored`, with this as its `lastError`.',
    whatToDo: 'Ask the payer to top up, then capture again before `validBefore`; or void the authorization and take payment another way.',
    retry: 'once the cause is fixed',
  },
  insufficient_merchant_gas: {
    meaning:
      "The merchant key that sends the capture (or refund) holds too little of the chain's native coin for its gas. Nothing was sent: " +
      "an authorization stays `stored`; a refund fails with it as its `failure`; a partial capture's release retries.",
    whatToDo: 'Operator: fund the merchant address named in the message with native gas; then capture again, or ask for the refund again.',
    retry: 'once the cause is fixed',
  },
  token_policy_blocked: {
    meaning:
      "The token's own policy refuses the transfer: the token is paused, or it has blacklisted the payer or the merchant (FiatToken's " +
      '`paused()`, `isBlacklisted(address)`), found by the precheck before anything is sent or named by the revert. The message says which. ' +
      "An authorization stays `stored`; a refund fails with it as its `failure` (nothing moved); a partial capture's release retries until it goes through.",
    whatToDo:
      "Check the token: `paused()` and `isBlacklisted(payer)` / `isBlacklisted(merchant)` on the token contract. A pause is the issuer's and usually " +
      'temporary: capture (or ask for the refund) again after it lifts, before `validBefore`. A blacklisted payer cannot pay with this token: void and take payment another way. ' +
      'A blacklisted merchant address is an operator matter with the token issuer. A capture answers 422 with this code; a refund answers 201 with ' +
      '`state: "failed"` and this `failure.code`. Once the cause is gone, send a new request with a new Idempotency-Key: the same key replays this answer for 24 h. ' +
      'A refund to a blacklisted payer cannot be paid in this token: settle it outside authcap.',
    retry: 'once the cause is fixed',
  },
  authorization_not_yet_valid: {
    meaning: "The capture came before the authorization's `validAfter` by chain time (precheck, or the token's revert). It stays `stored`.",
    whatToDo: 'Capture again after `validAfter`.',
    retry: 'once the cause is fixed',
  },
  authorization_expired: {
    meaning:
      "The authorization's `validBefore` has passed by chain time: a pre-signed one that arrives already expired, a capture after the deadline, " +
      'or a capture not mined before it. Nothing moved; the authorization is (or becomes) `expired`. A payer sees it on a checkout link that ran out.',
    whatToDo: 'Ask the payer for a new authorization (a new checkout link for the order); capture sooner after signing.',
    retry: 'never',
  },
  nonce_already_used: {
    meaning:
      "The authorization's nonce is already used or canceled onchain: someone settled or canceled this signed authorization outside this command " +
      '(a pre-signed one that was spent already, or the payer canceled it). authcap reconciles the authorization from the chain.',
    whatToDo: 'Read the authorization: it ends `captured` if the money reached the merchant, else `canceled`. For a new payment, the payer signs anew.',
    retry: 'after reading the authorization',
  },
  validity_too_long: {
    meaning: 'A pre-signed authorization whose `validBefore` is further away than AUTHCAP_MAX_VALIDITY_SECONDS (default 7 days).',
    whatToDo: 'Ask the payer for an authorization with a shorter validity window.',
    retry: 'after fixing the request',
  },
  domain_mismatch: {
    meaning:
      'A pre-signed authorization was signed for another EIP-712 domain (token name, version, chain id or contract) than the token served, ' +
      'or the request names a network or token other than the one its signature is for.',
    whatToDo:
      "Have the payer sign for the served token's domain (the draft's `typedData.domain` shows it), or name the network and token the payload was signed for.",
    retry: 'after fixing the request',
  },
  network_not_served: {
    meaning: 'The request names a network this deployment does not serve (the message lists those it does).',
    whatToDo: 'Use one of the networks listed, or have the operator add it to the deployment file (AUTHCAP_CONFIG).',
    retry: 'after fixing the request',
  },
  token_not_served: {
    meaning: 'The request names a token this deployment does not serve on that network (the message lists those it does).',
    whatToDo: 'Use one of the tokens listed, or have the operator add it to the deployment file (AUTHCAP_CONFIG).',
    retry: 'after fixing the request',
  },
  recipient_mismatch: {
    meaning:
      'A pre-signed authorization pays someone other than this deployment\'s merchant addresses (`to`), or the token reverted with "caller must be the payee".',
    whatToDo: "Have the payer sign an authorization whose `to` is the merchant address (a draft's `typedData.message.to`).",
    retry: 'after fixing the request',
  },
  contract_wallet_unsupported: {
    meaning:
      'The payer is a contract wallet (ERC-1271) and the token cannot check its signatures onchain (no `bytes signature` overloads, as in ' +
      'FiatToken v2.1): refused when signed, not when captured.',
    whatToDo: 'The payer pays from an ordinary account (EOA), or by another means. Retrying with the same wallet and token cannot succeed.',
    retry: 'never',
  },
  capture_reverted: {
    meaning:
      'The capture (or cancellation) transaction reverted onchain or was refused by the node for a reason the token did not name, or the relayer ' +
      'did not send it. Nothing moved; the authorization is back to `stored`, with this as its `lastError` and the transaction in the message.',
    whatToDo:
      'Look up the transaction named in the message. If the cause is gone, capture again before `validBefore`; if it repeats, an operator checks the ' +
      'merchant key, the node and the token (see docs/operating.md).',
    retry: 'after reading the authorization',
  },
  relay_refused: {
    meaning:
      "The merchant's relayer refused a call it cannot check against what it concerns: a network or token its worker does not serve, raw " +
      'calldata, a refund that no capture of this payer backs (or that, with the refunds of that capture the chain shows landed, would give back ' +
      'more than it moved), a request that is not fresh (copied into a relayer started again), or a call ' +
      'that would revert at the pending block (it simulates every call before it signs). It signs nothing else.',
    whatToDo:
      'Operator: check that the worker serves the network and token of the authorization (the deployment file) and read the message; this is not a caller mistake.',
    retry: 'once the cause is fixed',
  },
  capture_exceeds_authorized: {
    meaning: "A partial capture's `amount` is larger than the payer authorized.",
    whatToDo: 'Capture at most the authorized `amount` (or omit `amount` to capture it all).',
    retry: 'after fixing the request',
  },
  amount_exceeds_capturable: {
    meaning:
      'A capture of a held payment asks for more than is still capturable: what is held, less the captures made or under way (`details.amountCapturable`). Nothing was captured.',
    whatToDo: 'Read the authorization (`amountCapturable`) and capture at most that, or omit `amount` to capture all of it.',
    retry: 'after reading the authorization',
  },
  hold_expired: {
    meaning:
      "The hold's capture window closed (the escrow's `authorizationExpiry`, `hold.captureBefore` on the authorization): the escrow takes no capture after it, and what is held goes back to the payer.",
    whatToDo: 'Nothing more can be captured from this authorization; ask the payer for a new one.',
    retry: 'never',
  },
  too_many_captures: {
    meaning: `The hold already has the most captures authcap keeps for one (${MAX_CAPTURES_PER_HOLD}).`,
    whatToDo: 'Capture what is left in one final capture (`final: true`), or void it.',
    retry: 'never',
  },
  holds_not_available: {
    meaning: 'The request asks to hold funds (`hold: true`) on a network or token whose deployment names no escrow (`networks[].escrow`).',
    whatToDo: 'Ask without `hold` (a deferred authorization), on a network with an escrow, or have the operator configure one (docs/holds.md).',
    retry: 'once the cause is fixed',
  },
  refund_exceeds_captured: {
    meaning: 'The refund, with the refunds already made or under way, would give back more than was captured (or nothing is left to refund).',
    whatToDo: 'List the refunds (`GET …/{id}/refunds`) and ask at most what is left of `amountCaptured` less `amountRefunded` and pending refunds.',
    retry: 'after fixing the request',
  },
  refund_limit_reached: {
    meaning: `The authorization already has the most refunds authcap keeps for one (${MAX_REFUNDS_PER_AUTHORIZATION}).`,
    whatToDo: 'Give the rest back in one refund of what is left, or by other means.',
    retry: 'never',
  },
  insufficient_merchant_balance: {
    meaning:
      'The merchant key that received the capture holds too little of the token to give the refund back (found before signing, or named by the revert). ' +
      "The refund fails with this as its `failure` (nothing moved); a partial capture's release retries until the key can cover it.",
    whatToDo:
      'Operator: move enough of the token to the merchant address named in the message, then ask for a new refund with a new Idempotency-Key (the old key answers with the failed refund). A release goes through by itself.',
    retry: 'once the cause is fixed',
  },
  refund_reverted: {
    meaning:
      'The refund transaction reverted onchain for a reason the token did not name, could not be prepared, or its nonce was canceled; the relayer did not send it. ' +
      'A refund whose attempts all fail ends `failed` with this as its `failure`: nothing moved.',
    whatToDo:
      'Read the refund (`GET /v1/refunds/{id}`) and the transaction in its message; once the cause is fixed, ask for a new refund with a new Idempotency-Key.',
    retry: 'after reading the authorization',
  },
  refund_sequence_taken: {
    meaning:
      "The refund's place (its sequence, and so its EIP-3009 nonce) had already moved money onchain for another amount or to another address: " +
      'its ledger was rewound (a Temporal reset) and the place given to a new refund. The transfer in the message is not this refund; the refund ' +
      'ends `failed`, nothing of it moved. What landed there still counts against the capture.',
    whatToDo:
      'Operator: read the transaction in the message and the refunds of the authorization onchain before asking again. A new request takes the next ' +
      'place, and the merchant key signs it only if, with every refund the chain shows, it stays within the capture.',
    retry: 'after reading the authorization',
  },
  webhook_url_not_allowed: {
    meaning:
      'A webhook URL whose host is, or resolves to, an address authcap must not call: loopback, private network, link-local or cloud metadata ' +
      '(`details.reason`, `details.address`). Deliveries check again at each attempt, as DNS may change.',
    whatToDo:
      'Register a public URL. For a receiver on the same host or network, an operator may allow AUTHCAP_WEBHOOK_ALLOW_LOOPBACK or AUTHCAP_WEBHOOK_ALLOW_PRIVATE.',
    retry: 'after fixing the request',
  },
  chain_unavailable: {
    meaning:
      "The chain node (or the merchant's relayer) did not answer in time, so authcap could not read or check what it needed; also a refund " +
      'attempt that was not mined before its window closed. Nothing was decided on its behalf.',
    whatToDo: 'Retry after Retry-After. If it lasts, an operator checks the node (`/readyz` names each network) and the worker.',
    retry: 'after Retry-After',
  },
  temporal_unavailable: {
    meaning: 'Temporal could not be reached, or did not answer in time: authcap could not apply or read anything.',
    whatToDo: 'Retry after Retry-After with the same Idempotency-Key (a repeat is safe). If it lasts, an operator checks the Temporal cluster (`/readyz`).',
    retry: 'after Retry-After',
  },
  worker_unavailable: {
    meaning: 'Temporal answered but no authcap worker took the command in time. The command may still be applied when a worker returns.',
    whatToDo:
      'Read the authorization before retrying (the command may have been applied); retry after Retry-After. An operator checks that workers run (`/readyz`).',
    retry: 'after reading the authorization',
  },
  idempotency_unavailable: {
    meaning:
      "A request with an Idempotency-Key arrived while the database that keeps the keys' answers (`AUTHCAP_IDEMPOTENCY_DATABASE_URL`) did not answer. Nothing was run: without the key's record authcap cannot tell a retry from a first request.",
    whatToDo:
      'Retry after Retry-After with the same Idempotency-Key. If it lasts, an operator checks the PostgreSQL the APIs keep their keys in (the API logs each failed claim with its cause).',
    retry: 'after Retry-After',
  },
  internal_error: {
    meaning: 'Something failed that authcap has no code for (a bug, or a store that did not answer). Logged by the API with its cause.',
    whatToDo: 'Retry shortly with the same Idempotency-Key; if it repeats, report it with the time and request: the API log has the cause.',
    retry: 'after a short wait',
  },
};
