import type { Decider, DomainEvent } from '../../src/domain/decider';

/**
 * Decider specifications in Emmett's style: `given([events]).when(command).then([events])`, or
 * `.thenThrows(expectedError)` for a refusal (same class, message and, when given, field), or `.thenRefuses(message)`
 * where only the message is pinned (jest's `toThrow(message)`: the message contains it).
 */
export function deciderSpec<State, Command, Event extends DomainEvent>(
  decider: Decider<State, Command, Event>,
  initialState: () => State = decider.initialState,
) {
  return {
    given(events: Event[]) {
      return {
        when(command: Command) {
          const run = () => decider.decide(command, events.reduce(decider.evolve, initialState()));
          return {
            then(expected: Event[]): void {
              expect(run()).toEqual(expected);
            },
            thenRefuses(message: string): void {
              expect(run).toThrow(message);
            },
            thenThrows(expected: Error & { field?: string }): void {
              let thrown: unknown;
              try {
                run();
              } catch (error) {
                thrown = error;
              }
              expect(thrown).toBeInstanceOf(expected.constructor);
              const error = thrown as Error & { field?: string };
              expect(error.message).toBe(expected.message);
              expect(error.field).toBe(expected.field);
            },
          };
        },
      };
    },
  };
}
