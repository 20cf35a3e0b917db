import { randomUUID } from 'node:crypto';
import type { EventStore, ExpectedState, NewEvent, RecordedEvent, StreamAppend } from '../ports/eventStore';
import { StreamNotFoundError, WrongExpectedVersionError } from '../ports/eventStore';
import { decideOn, type Decider, type DomainEvent } from '../domain/decider';
import { ProjectionStoppedError, type Projector } from '../projections/projector';
import type { RequestMeta } from './requestMeta';
import { withCommandEventIds } from './eventIds';

export interface LoadedStream<State> {
  state: State;
  /** Expected state for the next append: the current revision, or no_stream. */
  expected: ExpectedState;
  exists: boolean;
}

const MAX_ATTEMPTS = 50;

/**
 * What command handlers use: load an aggregate from its stream, append with an expected revision, retry the whole
 * load → decide → append cycle on a conflict, then wait until the read models reflect the write (read-your-writes).
 */
export class CommandRunner {
  constructor(
    readonly store: EventStore,
    readonly projector: Projector,
  ) {}

  async load<State, Event extends DomainEvent>(
    streamId: string,
    decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
  ): Promise<LoadedStream<State>> {
    let state = decider.initialState();
    let revision: bigint | null = null;
    try {
      // Folding needs types, data and revisions, not positions (which KurrentDB may have to look up).
      for await (const event of this.store.readStream(streamId, { positions: false })) {
        state = decider.evolve(state, { type: event.type, data: event.data } as Event);
        revision = event.revision;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return { state, expected: revision ?? 'no_stream', exists: revision !== null };
  }

  /**
   * The whole cycle for a command on one stream: load the aggregate, decide (events checked against their schemas),
   * append with the stream's expected revision; a conflict re-runs it against the new state. Resolves with the events.
   */
  async decideOnStream<State, Command, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, Command, Event>,
    command: Command,
    meta: RequestMeta,
  ): Promise<Event[]> {
    return this.run(async () => {
      const stream = await this.load(streamId, decider);
      const { events } = decideOn(decider, stream.state, command);
      return {
        appends: [{ streamId, expectedState: stream.expected, events: toNewEvents(events, meta) }],
        result: events,
      };
    });
  }

  /** Reads a whole stream's recorded events (for history and point-in-time reads). */
  async readAll(streamId: string): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      for await (const event of this.store.readStream(streamId)) events.push(event);
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return events;
  }

  /**
   * Runs `attempt` (load → decide → build appends) and appends atomically, the events' ids derived from the command
   * (so a store that repeats an append with an unknown outcome sends the same events); on a concurrency conflict runs
   * it again against the new state. Resolves with the attempt's result once the read models have caught up.
   */
  async run<R>(attempt: () => Promise<{ appends: StreamAppend[]; result: R }>): Promise<R> {
    // The command's id: with the attempt and each event's index it fixes the events' ids (./eventIds.ts).
    const commandId = randomUUID();
    for (let n = 1; ; n++) {
      const { appends, result } = await attempt();
      const nonEmpty = appends.filter((a) => a.events.length > 0);
      if (nonEmpty.length === 0) return result;
      try {
        const { position } = await this.store.appendToStreams(withCommandEventIds(nonEmpty, commandId, n));
        try {
          await this.projector.waitFor(position);
        } catch (error) {
          // Recorded, but the read models stopped before it: the answer must say the change was made.
          throw error instanceof ProjectionStoppedError ? error.afterAppend() : error;
        }
        return result;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || n >= MAX_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * n)));
      }
    }
  }
}

/** Stamps domain events with the request's provenance. */
export function toNewEvents(events: DomainEvent[], meta: RequestMeta, at = new Date().toISOString()): NewEvent[] {
  return events.map((event) => ({
    type: event.type,
    data: event.data,
    metadata: {
      userId: meta.userId,
      requestId: meta.requestId,
      correlationId: meta.correlationId,
      causationId: meta.causationId,
      at,
    },
  }));
}
