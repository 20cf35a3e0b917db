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
