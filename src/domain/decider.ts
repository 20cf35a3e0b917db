import type { z } from 'zod';

/**
 * A decider (Emmett / Jérémie Chassaing's pattern): three pure functions per aggregate, no I/O.
 * `decide` throws a typed domain error (ValidationError, RestError, …) when the command is refused.
 */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/** The zod schema of each event type's data: the contract subscribers read, checked before every append. */
type EventSchemas<Event extends DomainEvent> = {
  readonly [T in Event['type']]: z.ZodType<Extract<Event, { type: T }>['data']>;
};

export interface Decider<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
  eventSchemas: EventSchemas<Event>;
}

/** Checks an event against its schema (throws the zod error, a bug: deciders only emit valid events). */
function assertEvent<Event extends DomainEvent>(schemas: EventSchemas<Event>, event: Event): Event {
  (schemas[event.type as Event['type']] as z.ZodType).parse(event.data);
  return event;
}

/**
 * The decide step every command shares: runs the decider, checks each event against its schema, and returns the
 * events with the state they lead to (for a command that decides again on the result).
 */
export function decideOn<State, Command, Event extends DomainEvent>(
  decider: Decider<State, Command, Event>,
  state: State,
  command: Command,
): { events: Event[]; state: State } {
  const events = decider.decide(command, state).map((event) => assertEvent(decider.eventSchemas, event));
  return { events, state: events.reduce((current, event) => decider.evolve(current, event), state) };
}

export function foldEvents<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
  events: Event[],
): State {
  return events.reduce((state, event) => decider.evolve(state, event), decider.initialState());
}

/**
 * Ends a switch over an event union (`default: return unknownEvent(event, state)`): once every member has a case,
 * `event` is `never` there, so an event type added to the union but not handled is a compile error at that switch.
 * At run time an event this version does not know (appended by a newer version) changes nothing, as before.
 */
export function unknownEvent<State>(event: never, state: State): State {
  return state;
}
