import { randomUUID } from 'node:crypto';
import type { EventStore, RecordedEvent, StreamAppend } from '../ports/eventStore';
import { StreamNotFoundError, WrongExpectedVersionError } from '../ports/eventStore';
import type { Decider, DomainEvent } from '../domain/decider';
import { ProjectionStoppedError, type Projector } from '../projections/projector';
import type { RequestMeta } from './requestMeta';
import { withCommandEventIds } from './eventIds';
import { CommandAttempt, type AnyDecidedStream, type DecidedStream } from './streamHandle';
import { foldStream } from '../queries/streamState';

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

  /**
   * The stream handle for a command on one stream (Emmett's CommandHandler): loads the stream with its decider, runs
   * `decide` on it (which decides through `stream.decide(command)` and may read what else it needs), and appends the
   * decided events with the revision read, stamped with `meta` and the command's event ids; a conflict re-runs it all
   * against the new state. Resolves with what `decide` returned, once the read models show the write.
   */
  async handle<State, Command, Event extends DomainEvent, R>(
    streamId: string,
    decider: Decider<State, Command, Event>,
    meta: RequestMeta,
    decide: (stream: DecidedStream<State, Command, Event>) => R | Promise<R>,
  ): Promise<R> {
    return this.handleGroup(meta, async (attempt) => {
      const stream = await attempt.load(streamId, decider);
      return { append: [stream], result: await decide(stream) };
    });
  }

  /**
   * The stream handle for a command whose events go to several streams in one atomic append (a name's reservation
   * with the resource that takes it, an upload's completion with its file): `attempt` opens the streams it needs
   * (`load`, `create`, `at`), decides on them, and returns them in the order they are appended. Every append
   * expects what was read; metadata and event ids as in {@link handle}. The attempt may return the `meta` its events
   * carry when the request's must be completed from what it read (the owner of an API key used without a login).
   *
   * Not through a handle: `run` alone, for the tests of the append protocol (test/unit/appendUnknownOutcome.test.ts),
   * which append raw events that no decider makes. Every command of src/commands goes through `handle`/`handleGroup`.
   */
  async handleGroup<R>(
    meta: RequestMeta,
    attempt: (
      attempt: CommandAttempt,
    ) => Promise<{ append: readonly AnyDecidedStream[]; result: R; meta?: RequestMeta }>,
  ): Promise<R> {
    return this.run(async () => {
      const streams = new CommandAttempt((streamId, decider) =>
        foldStream({ eventStore: this.store }, streamId, decider),
      );
      const decided = await attempt(streams);
      return { appends: streams.appends(decided.append, decided.meta ?? meta), result: decided.result };
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
