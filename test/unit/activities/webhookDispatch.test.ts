// The webhook dispatcher's decisions, with fake sources: each attempt's events in order and each
// once, only what the endpoint subscribed to and was recorded after it was created, a refused event
// retried on its own (its attempt's later events behind it) while other attempts go on, an endpoint
// refusing everything paused, given up after 3 days, and a deleted endpoint the end.
import { describe, expect, it } from 'vitest';
import {
  ENDPOINT_FRESH_MS,
  GIVE_UP_AFTER_MS,
  WebhookDispatcher,
  initialCursor,
  type DispatchSources,
  type EventfulRun,
} from '../../../activities/webhookDispatch.js';
import { eventId, type EventType, type RecordedEvent, type WebhookEndpointRecord } from '../../../domain/events.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const KEY_A = '0193aaaa-0000-7000-8000-000000000001';
const KEY_B = '0193bbbb-0000-7000-8000-000000000002';

function event(key: string, sequence: number, type: EventType, recordedMs: number): RecordedEvent {
  return {
    id: eventId(key, sequence),
    type,
    createdAt: at(recordedMs),
    orderId: `order-${key.slice(4, 8)}`,
    data: { object: {} },
    sequence,
    recordedAt: at(recordedMs),
  } as unknown as RecordedEvent;
}

class World implements DispatchSources {
  now = T0;
  runs = new Map<string, { key: string; events: RecordedEvent[]; updatedAt: string }>();
  endpointReads = 0;
  endpointRecord: WebhookEndpointRecord | undefined = {
    id: 'we_1',
    url: 'http://127.0.0.1:1/h',
    events: ['*'],
    description: null,
    createdAt: at(-1_000),
    secret: 's',
  };
  delivered: string[] = [];
  refuse = new Set<string>();
  refuseAll = false;
  reads = 0;

  record(key: string, e: RecordedEvent) {
    const run = this.runs.get(key) ?? { key, events: [], updatedAt: e.recordedAt };
    run.events.push(e);
    run.updatedAt = e.recordedAt;
    this.runs.set(key, run);
  }
  async changedSince(since: Date): Promise<EventfulRun[]> {
    return [...this.runs.values()]
      .filter((r) => Date.parse(r.updatedAt) >= since.getTime())
      .map((r) => ({
        key: r.key,
        workflowId: `authorization-${r.key}`,
        runId: r.key,
        updatedAt: r.updatedAt,
        events: async () => {
          this.reads++;
          return [...r.events];
        },
      }));
  }
  async eventsOf(workflowId: string) {
    return [...(this.runs.get(workflowId.replace('authorization-', ''))?.events ?? [])];
  }
  async endpoint() {
    this.endpointReads++;
    return this.endpointRecord;
  }
  async deliver(_endpoint: WebhookEndpointRecord, e: RecordedEvent) {
    if (this.refuseAll || this.refuse.has(e.id)) throw new Error('answered 500');
    this.delivered.push(e.id);
  }
}

function dispatcherIn(world: World) {
  return new WebhookDispatcher('we_1', world, initialCursor(world.now), () => world.now);
}

describe('WebhookDispatcher', () => {
  it("delivers each attempt's events in order, each once, over scans that overlap", async () => {
    const world = new World();
    const d = dispatcherIn(world);
    world.record(KEY_A, event(KEY_A, 1, 'authorization.drafted', 100));
    world.record(KEY_B, event(KEY_B, 1, 'authorization.drafted', 150));
    world.now += 1_000;
    await d.step();
    world.record(KEY_A, event(KEY_A, 2, 'authorization.stored', 1_200));
    world.record(KEY_A, event(KEY_A, 3, 'authorization.captured', 1_300));
    world.now += 1_000;
    await d.step();
    world.now += 1_000;
    await d.step();
    expect(world.delivered).toEqual([eventId(KEY_A, 1), eventId(KEY_B, 1), eventId(KEY_A, 2), eventId(KEY_A, 3)]);
  });

  it('reads a run again only when its stamp moved', async () => {
    const world = new World();
    const d = dispatcherIn(world);
    world.record(KEY_A, event(KEY_A, 1, 'authorization.drafted', 100));
    world.now += 1_000;
    await d.step();
    const reads = world.reads;
    world.now += 1_000;
    await d.step();
    await d.step();
    expect(world.reads).toBe(reads);
  });

  it('delivers only the types subscribed to, and nothing recorded before the endpoint existed', async () => {
    const world = new World();
    world.endpointRecord = { ...world.endpointRecord!, events: ['authorization.captured'], createdAt: at(500) };
    const d = dispatcherIn(world);
    world.record(KEY_A, event(KEY_A, 1, 'authorization.captured', 100));
    world.record(KEY_B, event(KEY_B, 1, 'authorization.drafted', 600));
    world.record(KEY_B, event(KEY_B, 2, 'authorization.captured', 700));
    world.now += 1_000;
    await d.step();
    expect(world.delivered).toEqual([eventId(KEY_B, 2)]);
  });

  it("retries a refused event on its own, its attempt's later events behind it, while other attempts go on", async () => {
    const world = new World();
    const d = dispatcherIn(world);
    world.refuse.add(eventId(KEY_A, 1));
    world.record(KEY_A, event(KEY_A, 1, 'authorization.drafted', 100));
    world.record(KEY_A, event(KEY_A, 2, 'authorization.stored', 200));
    world.record(KEY_B, event(KEY_B, 1, 'authorization.drafted', 300));
    world.now += 1_000;
    await d.step();
    expect(world.delivered).toEqual([eventId(KEY_B, 1)]);
    expect(Object.keys(d.cursor.retries)).toEqual([KEY_A]);
    world.refuse.clear();
    world.now += 5_000;
    await d.step();
    expect(world.delivered).toEqual([eventId(KEY_B, 1), eventId(KEY_A, 1), eventId(KEY_A, 2)]);
    expect(d.cursor.retries).toEqual({});
  });

  it("gives each refused event its own backoff: the next one is not held by the first one's attempts", async () => {
    const world = new World();
    const d = dispatcherIn(world);
    const refusals = new Map<string, number>();
    world.deliver = async (_endpoint, e) => {
      const n = (refusals.get(e.id) ?? 0) + 1;
      refusals.set(e.id, n);
      if (n <= 3) throw new Error('answered 500');
      world.delivered.push(e.id);
    };
    world.record(KEY_A, event(KEY_A, 1, 'authorization.drafted', 100));
    world.record(KEY_A, event(KEY_A, 2, 'authorization.stored', 200));
    // Each event: refused three times (1 s, 2 s, 4 s apart), then taken: both within half a minute.
    for (let i = 0; i < 30; i += 1) {
      world.now += 1_000;
      await d.step();
    }
    expect(world.delivered).toEqual([eventId(KEY_A, 1), eventId(KEY_A, 2)]);
  });

  it('pauses an endpoint that refuses everything, and scans from where it stopped once it answers', async () => {
    const world = new World();
    const d = dispatcherIn(world);
    world.refuseAll = true;
    for (const [i, key] of [KEY_A, KEY_B, '0193cccc-0000-7000-8000-000000000003', '0193dddd-0000-7000-8000-000000000004'].entries()) {
      world.record(key, event(key, 1, 'authorization.drafted', 100 + i));
    }
    world.now += 1_000;
    await d.step();
    expect(d.cursor.pausedUntil).toBeDefined();
    expect(world.delivered).toEqual([]);
    world.refuseAll = false;
    // Hours later: the retries (and then the scan) deliver everything, each once.
    for (let i = 0; i < 20; i += 1) {
      world.now += 60_000;
      await d.step();
    }
    expect(new Set(world.delivered).size).toBe(4);
    expect(world.delivered.length).toBe(4);
  });

  it('gives an event up after 3 days of refusals and goes on with the next', async () => {
    const world = new World();
    const d = dispatcherIn(world);
    world.refuse.add(eventId(KEY_A, 1));
    world.record(KEY_A, event(KEY_A, 1, 'authorization.drafted', 100));
    world.record(KEY_A, event(KEY_A, 2, 'authorization.stored', 200));
    world.now += 1_000;
    await d.step();
    world.now += GIVE_UP_AFTER_MS + 3_600_000;
    await d.step();
    expect(world.delivered).toEqual([eventId(KEY_A, 2)]);
    expect(d.cursor.totals.failed).toBe(1);
  });

  it('sends nothing recorded after it read the endpoint: deleted meanwhile, nothing more; kept, the next step sends it', async () => {
    for (const deleted of [true, false]) {
      const world = new World();
      const d = dispatcherIn(world);
      world.record(KEY_A, event(KEY_A, 1, 'authorization.drafted', 100));
      world.refuse.add(eventId(KEY_B, 1));
      world.record(KEY_B, event(KEY_B, 1, 'authorization.drafted', 200));
      world.now += 1_000;
      await d.step();
      expect(Object.keys(d.cursor.retries)).toEqual([KEY_B]);
      world.refuse.clear();
      world.now += ENDPOINT_FRESH_MS + 1_000; // the next step reads the endpoint again
      // While the step holds the endpoint it read, the endpoint is deleted (or not) and both attempts
      // record an event: the scan's run and the retried one.
      world.endpoint = async () => {
        const answer = world.endpointRecord;
        world.now += 50;
        world.record(KEY_A, event(KEY_A, 2, 'authorization.voided', world.now - T0));
        world.record(KEY_B, event(KEY_B, 2, 'authorization.voided', world.now - T0));
        if (deleted) world.endpointRecord = undefined;
        world.endpoint = async () => world.endpointRecord;
        return answer;
      };
      expect(await d.step()).toBe(true);
      expect(world.delivered).toEqual([eventId(KEY_A, 1), eventId(KEY_B, 1)]);
      world.now += 1_000;
      expect(await d.step()).toBe(!deleted);
      const later = deleted ? [] : [eventId(KEY_B, 2), eventId(KEY_A, 2)];
      expect(world.delivered).toEqual([eventId(KEY_A, 1), eventId(KEY_B, 1), ...later]);
    }
  });

  it('ends once the endpoint is deleted, at the latest when its last read grows stale', async () => {
    const world = new World();
    const d = dispatcherIn(world);
    expect(await d.step()).toBe(true);
    world.endpointRecord = undefined;
    world.now += ENDPOINT_FRESH_MS + 1;
    expect(await d.step()).toBe(false);
  });

  it('sends nothing recorded after the read it still trusts: an endpoint deleted meanwhile gets no event of later', async () => {
    const world = new World();
    const d = dispatcherIn(world);
    world.record(KEY_A, event(KEY_A, 1, 'authorization.drafted', 100));
    world.now += 1_000;
    await d.step();
    expect(world.delivered).toEqual([eventId(KEY_A, 1)]);
    // Deleted right after that read; an event follows within the read's freshness.
    world.endpointRecord = undefined;
    world.now += 500;
    world.record(KEY_B, event(KEY_B, 1, 'authorization.voided', world.now - T0));
    world.now += 500;
    const reads = world.endpointReads;
    expect(await d.step()).toBe(true); // trusts its read: the new event waits on a newer one
    expect(world.delivered).toEqual([eventId(KEY_A, 1)]);
    world.now += 1_000;
    expect(await d.step()).toBe(false); // an event waited: read again at once, and it is gone
    expect(world.endpointReads).toBe(reads + 1);
    expect(world.delivered).toEqual([eventId(KEY_A, 1)]);
  });

  it('reads the endpoint again within its freshness only when an event waits on a newer read', async () => {
    const world = new World();
    const d = dispatcherIn(world);
    world.record(KEY_A, event(KEY_A, 1, 'authorization.drafted', 100));
    world.now += 1_000;
    await d.step();
    for (let i = 0; i < 4; i++) {
      world.now += 1_000;
      await d.step();
    }
    expect(world.endpointReads).toBe(1);
    world.record(KEY_A, event(KEY_A, 2, 'authorization.voided', world.now - T0 + 10));
    world.now += 20;
    await d.step(); // within the read's freshness, recorded after it: held back
    world.now += 1_000;
    await d.step();
    expect(world.endpointReads).toBe(2);
    expect(world.delivered).toEqual([eventId(KEY_A, 1), eventId(KEY_A, 2)]);
  });
});
