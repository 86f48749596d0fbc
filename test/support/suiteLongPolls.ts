// How long the integration suite's Temporal server holds a poll that finds no task before answering
// it empty (matching.longPollExpirationInterval; the server's default is a minute). The suite's server
// is started with this (test/integration/globalSetup.ts), and the rogue-poller tests wait for it: a
// poller's polls are matched first once the worker's polls open before them have expired.
export const SUITE_LONG_POLL_EXPIRY_SECONDS = 20;

/** The dev server's dynamic config with the suite's long-poll expiry added. */
export function withSuiteLongPollExpiry(dynamicConfig: readonly string[]): string[] {
  return [...dynamicConfig, `matching.longPollExpirationInterval="${SUITE_LONG_POLL_EXPIRY_SECONDS}s"`];
}
