// Which transitions an order service hears about. Pure: the machine's state before and after a step
// (as dotted stages, e.g. `stored.prechecking`) and the event that caused it decide the event types.
// A refused command that leaves the state as it was (a bad signature) is no event: its caller
// already got the error.
import { finalStates, type AuthorizationState } from '../domain/authorization.js';
import { finalEventType, type EventType } from '../domain/events.js';

const isFinal = (state: string): state is AuthorizationState => (finalStates as readonly string[]).includes(state);

const top = (stage: string) => stage.split('.')[0]!;

export function eventTypesFor(from: string, to: string, machineEvent: string): EventType[] {
  if (from === to) return [];
  const [before, after] = [top(from), top(to)];
  if (isFinal(after)) return [finalEventType(after)];
  if (after === 'drafted' && before === 'drafting') return ['authorization.drafted'];
  if (after === 'stored' && (before === 'drafting' || before === 'drafted')) return ['authorization.stored'];
  if (after === 'held' && before === 'holding') return ['authorization.held'];
  // A capture that ends back at rest without moving money: the precheck refused it, or the
  // transaction failed. The authorization stays stored and may be captured again.
  if (to === 'stored.idle' && (from === 'stored.prechecking' || before === 'capturing')) return ['authorization.capture_failed'];
  if (to === 'capturing.preconfirmed') return ['authorization.preconfirmed'];
  if (from === 'capturing.preconfirmed' && machineEvent === 'CAPTURE_REORGED') return ['authorization.reorged'];
  return [];
}

/** `stored.prechecking`, `capturing.preconfirmed`, `captured`: the machine's value as one string. */
export function stageOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value as Record<string, unknown>)[0]!;
  return `${key}.${stageOf(inner)}`;
}
