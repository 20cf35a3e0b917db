import { StreamNotFoundError } from '../ports/eventStore';
import type { Decider, DomainEvent } from '../domain/decider';
import type { LogDeps } from './readDeps';

/**
 * A stream's state as its decider folds it (its initial state when the stream does not exist): the reads of
 * aggregates that keep no read model (settings, upload sessions). Only the fold, never an expected revision: what
 * appends lives in the commands.
 */
export async function streamState<State, Event extends DomainEvent>(
  deps: LogDeps,
  streamId: string,
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
): Promise<{ state: State; exists: boolean }> {
  let state = decider.initialState();
  let exists = false;
  try {
    // Folding needs types and data, not positions (which KurrentDB may have to look up).
    for await (const event of deps.eventStore.readStream(streamId, { positions: false })) {
      state = decider.evolve(state, { type: event.type, data: event.data } as Event);
      exists = true;
    }
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return { state, exists };
}
