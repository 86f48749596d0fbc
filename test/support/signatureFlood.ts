// Helpers for the signature-flood suites (test/integration/attemptBudget.test.ts,
// contractWalletLockout.test.ts): a flood of requests with every answer kept, the payer's links as
// the URLs a page POSTs to, requests sent from addresses of our own on 127.0.0.0/8 (the public rate
// limit is per client address: a flood from many addresses is what a determined stranger sends, and
// it leaves the other test files' bucket alone), and what a flood left in the workflow's history.
import http from 'node:http';
import type { Client } from '@temporalio/client';
import proto, { type temporal as protoTypes } from '@temporalio/proto';
import { expect } from 'vitest';
import { parseResourceId } from '../../domain/ids.js';
import { readApiResult, type ApiResult } from './api.js';

const EventType = proto.temporal.api.enums.v1.EventType;

export interface Answer {
  status: number;
  code: string | undefined;
  retryAfter: string | null;
}

/** Where the payer's page POSTs: `…/signature` under a checkoutUrl, the cancelUrl itself (`…/cancel`). */
export function checkoutPostUrl(link: string, action: 'signature' | 'cancel'): string {
  const url = new URL(link);
  const path = action === 'signature' ? `${url.pathname}/signature` : url.pathname;
  if (action === 'cancel') expect(url.pathname.endsWith('/cancel'), `${link} is a cancel link`).toBe(true);
  return `${url.origin}${path}${url.search}`;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** Closes the flood's kept-alive connections. */
export function closeFloodConnections(): void {
  agent.destroy();
}

/** POSTs JSON (no API key) from `localAddress`, a loopback address of our choosing. */
export function postFrom<T = any>(localAddress: string, url: string, body: unknown): Promise<ApiResult<T>> {
  const target = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        agent,
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
          resolve(readApiResult<T>(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers })));
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** `count` client addresses of a /24 of 127.0.0.0/8 no other flood of this run uses. */
export function strangerAddresses(count: number): string[] {
  const second = 2 + Math.floor(Math.random() * 250);
  const third = Math.floor(Math.random() * 256);
  return Array.from({ length: count }, (_, i) => `127.${second}.${third}.${1 + (i % 250)}`);
}

/**
 * Sends `count` requests, `concurrency` at a time, at most `perSecond` a second when given (to stay
 * well inside a shared key's rate limit); resolves with every answer.
 */
export async function flood(
  count: number,
  concurrency: number,
  send: (i: number) => Promise<ApiResult>,
  options: { perSecond?: number } = {},
): Promise<Answer[]> {
  const answers: Answer[] = [];
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next;
        next += 1;
        if (options.perSecond) {
          const due = started + (i * 1000) / options.perSecond;
          if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
        }
        const res = await send(i);
        answers.push({ status: res.status, code: (res.body as any)?.error?.code, retryAfter: res.headers?.get('retry-after') ?? null });
      }
    }),
  );
  return answers;
}

/** "status code" → how many: what a failed assertion shows. */
export function tally(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) counts[`${a.status} ${a.code}`] = (counts[`${a.status} ${a.code}`] ?? 0) + 1;
  return counts;
}

/**
 * What a stranger gets through the API, however often: 422 invalid_signature, or a rate limit's 429
 * `rate_limited` with Retry-After. Never 5xx, never `too_many_attempts` (nothing was budgeted), never
 * `invalid_state` (nothing reached the workflow to keep it busy). Returns how many were judged.
 */
export function expectStrangerRefusals(answers: Answer[], count: number): number {
  const seen = JSON.stringify(tally(answers));
  expect(answers.length, seen).toBe(count);
  const judged = answers.filter((a) => a.status === 422 && a.code === 'invalid_signature').length;
  const rateLimited = answers.filter((a) => a.status === 429 && a.code === 'rate_limited' && Number(a.retryAfter) > 0).length;
  expect(judged + rateLimited, seen).toBe(count);
  return judged;
}

/** Every run of the authorization's workflow, from the id's run on (continue-as-new followed). */
async function runsOf(temporal: Client, id: string) {
  const { workflowId, runId } = parseResourceId(id)!;
  type Event = protoTypes.api.history.v1.IHistoryEvent;
  const runs: Event[][] = [];
  let next: string | undefined = runId;
  while (next) {
    const events: Event[] = (await temporal.workflow.getHandle(workflowId, next).fetchHistory()).events ?? [];
    runs.push(events);
    const last: Event | undefined = events.at(-1);
    next =
      last?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
        ? (last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined)
        : undefined;
  }
  return runs;
}

/**
 * Updates that entered history, across every run. The suite's stack reconciles every 2 s (events of
 * its own), so "no trace" is judged by these: a refused update is never accepted and leaves no event.
 */
export async function acceptedUpdates(temporal: Client, id: string): Promise<number> {
  const runs = await runsOf(temporal, id);
  return runs.flat().filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED).length;
}

const VERIFY = /^verify(Authorization|Cancel)Signature$/;

/** The activity type an event runs: a scheduled activity's, or a local activity's from its marker (plain JSON, never sealed). */
function activityTypeOf(event: protoTypes.api.history.v1.IHistoryEvent): string | undefined {
  if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) return event.activityTaskScheduledEventAttributes?.activityType?.name ?? undefined;
  const marker = event.markerRecordedEventAttributes;
  if (event.eventType !== EventType.EVENT_TYPE_MARKER_RECORDED || marker?.markerName !== 'core_local_activity') return undefined;
  const data = marker.details?.data?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type;
  } catch {
    return undefined;
  }
}

/** Signature checks the workflow ran against the chain (verify activities, local or not), across every run. */
export async function signatureChecksInHistory(temporal: Client, id: string): Promise<number> {
  const runs = await runsOf(temporal, id);
  return runs.flat().filter((e) => VERIFY.test(activityTypeOf(e) ?? '')).length;
}
