import type { ExpectedState, NewEvent, StreamAppend } from '../ports/eventStore';
import { decideOn, type Decider, type DomainEvent } from '../domain/decider';
import type { RequestMeta } from './requestMeta';

/**
 * One stream inside a command's attempt (Emmett's command handler, split so that one attempt may decide on several
 * streams): the state folded from the stream, the revision its append will expect (the one read), and the events
 * decided on it. Events reach a stream only through its decider (`decide`), so every event is decided from state and
 * checked against its schema; the handle (CommandRunner.handle / handleGroup) turns the decided events into the
 * append, with the request's metadata and the command's event ids.
 */
export class DecidedStream<State, Command, Event extends DomainEvent> implements AnyDecidedStream {
  private readonly events: Event[] = [];

  constructor(
    readonly streamId: string,
    private readonly decider: Decider<State, Command, Event>,
    private current: State,
    /** What the append expects of the stream: the revision read, `no_stream`, or (see `CommandAttempt.at`) a state. */
    readonly expected: ExpectedState,
    /** Whether the stream had events when read. */
    readonly exists: boolean,
  ) {}

  get state(): State {
    return this.current;
  }

  /** The events decided on this stream so far in the attempt. */
  get decided(): readonly Event[] {
    return this.events;
  }

  /** Runs the decider on the current state; its events go to this stream's append and the state moves past them. */
  decide(command: Command): Event[] {
    const { events, state } = decideOn(this.decider, this.current, command);
    this.events.push(...events);
    this.current = state;
    return events;
  }

  /**
   * Decides from `state` instead of the folded one, for an aggregate whose creation is not on its own stream (a folder
   * or item created by a subtree copy: its state is the read model's). Only before anything was decided.
   */
  startFrom(state: State): void {
    if (this.events.length > 0) throw new Error(`Stream ${this.streamId}: startFrom after a decision.`);
    this.current = state;
  }

  /** The append of the decided events, stamped with the request's metadata. */
  toAppend(meta: RequestMeta): StreamAppend {
    return { streamId: this.streamId, expectedState: this.expected, events: toNewEvents(this.events, meta) };
  }
}

/** A decided stream of any decider, as an attempt lists them for appending. */
export interface AnyDecidedStream {
  readonly streamId: string;
  readonly decided: readonly DomainEvent[];
  toAppend(meta: RequestMeta): StreamAppend;
}

/** How an attempt reads a stream: its folded state and its last revision (null when it has no events). */
export type StreamLoader = <State, Event extends DomainEvent>(
  streamId: string,
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
) => Promise<{ state: State; revision: bigint | null }>;

/**
 * The streams of one attempt of a command. Every stream it opens is checked when the attempt ends: a stream with
 * decided events that the attempt did not list for appending is a bug (its events would be lost), not a silent drop.
 */
export class CommandAttempt {
  private readonly opened: AnyDecidedStream[] = [];

  constructor(private readonly read: StreamLoader) {}

  /** Reads the stream and folds it: its append expects the revision read (`no_stream` when it has no events). */
  async load<State, Command, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, Command, Event>,
  ): Promise<DecidedStream<State, Command, Event>> {
    const { state, revision } = await this.read(streamId, decider);
    return this.track(new DecidedStream(streamId, decider, state, revision ?? 'no_stream', revision !== null));
  }

  /** A stream this command creates (its id is new): not read; its append expects `no_stream`. */
  create<State, Command, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, Command, Event>,
    state: State = decider.initialState(),
  ): DecidedStream<State, Command, Event> {
    return this.track(new DecidedStream(streamId, decider, state, 'no_stream', false));
  }

  /**
   * A stream whose events the decision does not need, only an expected state: a name reservation whose revision was
   * read without its claims (the read model says whether the name is taken, src/commands/siblingNames.ts), the
   * folder-tree marker stream (its last event read backwards), a token revoked whatever its stream holds (`any`), a
   * quota stream read whole for its last position. Decided from `state` (the caller's fold) or the initial state.
   */
  at<State, Command, Event extends DomainEvent>(
    streamId: string,
    decider: Decider<State, Command, Event>,
    expected: ExpectedState,
    state: State = decider.initialState(),
  ): DecidedStream<State, Command, Event> {
    const exists = typeof expected === 'bigint' || expected === 'exists';
    return this.track(new DecidedStream(streamId, decider, state, expected, exists));
  }

  /** The appends of `streams` in their order; throws for a stream with decided events that is not among them. */
  appends(streams: readonly AnyDecidedStream[], meta: RequestMeta): StreamAppend[] {
    const listed = new Set(streams);
    const lost = this.opened.find((stream) => stream.decided.length > 0 && !listed.has(stream));
    if (lost) throw new Error(`Events decided on ${lost.streamId} but not appended.`);
    return streams.map((stream) => stream.toAppend(meta));
  }

  private track<S extends AnyDecidedStream>(stream: S): S {
    this.opened.push(stream);
    return stream;
  }
}

/** Stamps domain events with the request's provenance. */
export function toNewEvents(
  events: readonly DomainEvent[],
  meta: RequestMeta,
  at = new Date().toISOString(),
): NewEvent[] {
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
