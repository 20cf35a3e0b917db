import { StreamNotFoundError, type EventStore } from '../ports/eventStore';
import type { Decider, DomainEvent } from '../domain/decider';
import type { LogDeps } from './readDeps';

/**
 * A stream folded by its decider: its state (the initial state when the stream does not exist) and the revision of
 * its last event (null then). The one fold of the service: the query side reads aggregates that keep no read model
 * (settings, upload sessions) with it, and the command side's stream handle loads the state it decides on with it.
 */
export async function foldStream<State, Event extends DomainEvent>(
  deps: { eventStore: Pick<EventStore, 'readStream'> },
  streamId: string,
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
): Promise<{ state: State; revision: bigint | null }> {
  let state = decider.initialState();
  let revision: bigint | null = null;
  try {
    // Folding needs types, data and revisions, not positions (which KurrentDB may have to look up).
    for await (const event of deps.eventStore.readStream(streamId, { positions: false })) {
      state = decider.evolve(state, { type: event.type, data: event.data } as Event);
      revision = event.revision;
    }
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return { state, revision };
}

/** A stream's state for a read: only the fold, never an expected revision (what appends lives in the commands). */
export async function streamState<State, Event extends DomainEvent>(
  deps: LogDeps,
  streamId: string,
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
): Promise<{ state: State; exists: boolean }> {
  const { state, revision } = await foldStream(deps, streamId, decider);
  return { state, exists: revision !== null };
}
