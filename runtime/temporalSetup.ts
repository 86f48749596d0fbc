// What authcap needs from a Temporal namespace, made so on any server: the namespace itself and the
// custom search attributes, registered through the operator service (a self-hosted cluster on SQL
// visibility maps them onto its pre-made columns; the dev server is given them at start and this
// finds nothing to do). `npx authcap temporal-setup` runs it against a production cluster.
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { searchAttributeKeys } from '../domain/searchAttributes.js';

/** Closed authorizations stay readable (history, feed, CLI) this long after they end. */
export const DEFAULT_RETENTION_DAYS = 30;

type AttributeKey = (typeof searchAttributeKeys)[number];

const INDEXED_VALUE_TYPE = { KEYWORD: 2, INT: 3, DOUBLE: 4, BOOL: 5, DATETIME: 6, KEYWORD_LIST: 7, TEXT: 1 } as const;

/**
 * authcap's search attributes a namespace lacks, and those registered with another type, from the
 * operator service's `customAttributes` (setup adds the missing ones; `authcap doctor` reports both).
 */
export function searchAttributeGaps(registered: Record<string, number>): { missing: AttributeKey[]; wrongType: AttributeKey[] } {
  return {
    missing: searchAttributeKeys.filter((key) => !(key.name in registered)),
    wrongType: searchAttributeKeys.filter(
      (key) => key.name in registered && registered[key.name] !== INDEXED_VALUE_TYPE[key.type as keyof typeof INDEXED_VALUE_TYPE],
    ),
  };
}

export interface SetupReport {
  namespaceCreated: boolean;
  searchAttributesAdded: string[];
}

export async function ensureNamespaceReady(
  connection: Connection,
  namespace: string,
  options: { retentionDays?: number; timeoutMs?: number } = {},
): Promise<SetupReport> {
  const report: SetupReport = { namespaceCreated: false, searchAttributesAdded: [] };
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if ((err as { code?: number }).code !== 5) throw err;
    const days = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    await connection.workflowService.registerNamespace({
      namespace,
      description: 'authcap: authorizations, their refunds, the merchant relayers, log watchers and webhook dispatchers',
      workflowExecutionRetentionPeriod: msToTs(days * 24 * 3600 * 1000),
    });
    report.namespaceCreated = true;
  }
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  // A namespace just registered reaches the frontend's cache a few seconds later.
  const existing = await retrying(deadline, () => connection.operatorService.listSearchAttributes({ namespace }));
  const { missing } = searchAttributeGaps(existing.customAttributes ?? {});
  if (missing.length > 0) {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_VALUE_TYPE[key.type as keyof typeof INDEXED_VALUE_TYPE]])),
    });
    report.searchAttributesAdded = missing.map((key) => key.name);
  }
  await retrying(deadline, () =>
    connection.workflowService.countWorkflowExecutions({ namespace, query: searchAttributeKeys.map((key) => `${key.name} IS NULL`).join(' AND ') }),
  );
  return report;
}

/**
 * A new namespace and new search attributes reach every frontend through caches (up to ~10 s on a
 * default server): retry until the call is accepted, so the first start or list after setup works.
 */
async function retrying<T>(deadline: number, call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the namespace is not usable after setup: ${(err as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
