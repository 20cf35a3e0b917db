/**
 * A decider (Emmett / Jérémie Chassaing's pattern): three pure functions per aggregate, no I/O.
 * `decide` throws a typed domain error (ValidationError, RestError, …) when the command is refused.
 */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

export interface Decider<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
}

export function foldEvents<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
  events: Event[],
): State {
  return events.reduce(decider.evolve, decider.initialState());
}

/**
 * Ends a switch over an event union (`default: return unknownEvent(event, state)`): once every member has a case,
 * `event` is `never` there, so an event type added to the union but not handled is a compile error at that switch.
 * At run time an event this version does not know (appended by a newer version) changes nothing, as before.
 */
export function unknownEvent<State>(event: never, state: State): State {
  void event;
  return state;
}
