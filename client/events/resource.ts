// `client.events`: the events feed, oldest first after a cursor, so an order service that was down
// catches up without webhooks. The HTTP API's GET /v1/events calls this same method.
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { list, type EventPage, type ListEventsRequest } from './list.js';

export class Events {
  constructor(private readonly transport: TemporalTransport) {}

  /** Events after `after` (an event id), filtered by type or order; `hasMore` says more are ready now. */
  list(request: ListEventsRequest = {}): Promise<EventPage> {
    return list(this.transport, request);
  }
}
