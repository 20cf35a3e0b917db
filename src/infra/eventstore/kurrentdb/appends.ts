import type { EventData } from '@kurrent/kurrentdb-client';
import {
  StreamNotFoundError,
  WrongExpectedVersionError,
  expectationMet,
  type AppendResult,
  type ExpectedState,
  type NewEvent,
  type RecordedEvent,
  type StreamAppend,
} from '../../../ports/eventStore';
import {
  checkAppendSize,
  fromClientCurrentState,
  toBigInt,
  toClientStreamState,
  toEventData,
  toPortError,
} from './mapping';
import { DEFAULT_APPEND_RETRY, appendWithRetry, type AppendRetryOptions } from './appendRetry';
import type { ChannelUse, KurrentClient } from './client';
import type { KurrentReads } from './reads';

interface PreparedAppend {
  streamId: string;
  expectedState: ExpectedState;
  events: EventData[];
}

/**
 * Appends to KurrentDB: one stream with the classic append, several atomically with KurrentDB 25.1's multi-stream
 * append. The 1 MiB limit is checked before anything is sent. Event ids are fixed before the first attempt (the
 * caller's, else random), so a retry after an unknown outcome (./appendRetry.ts) sends the very same events, and an
 * append found written answers as recorded.
 */
export class KurrentAppends {
  constructor(
    private readonly client: KurrentClient,
    private readonly reads: KurrentReads,
    private readonly channel: ChannelUse,
    private readonly retry: AppendRetryOptions = DEFAULT_APPEND_RETRY,
  ) {}

  async appendToStream(
    streamId: string,
    events: NewEvent[],
    options: { expectedState: ExpectedState },
  ): Promise<AppendResult> {
    if (events.length === 0) return this.checkExpectation(streamId, options.expectedState);
    const { events: data, size } = toEventData(events);
    checkAppendSize(size);
    return this.appendPrepared({ streamId, expectedState: options.expectedState, events: data }, size);
  }

  async appendToStreams(appends: StreamAppend[]): Promise<{ position: bigint }> {
    const seen = new Set<string>();
    for (const a of appends) {
      if (seen.has(a.streamId)) throw new Error(`Stream ${a.streamId} appears more than once in one append.`);
      seen.add(a.streamId);
    }
    let size = 0;
    const prepared = appends.map((a): PreparedAppend => {
      const converted = toEventData(a.events);
      size += converted.size;
      return { streamId: a.streamId, expectedState: a.expectedState, events: converted.events };
    });
    checkAppendSize(size);

    // A stream given without events only states an expectation. KurrentDB 25.1 cannot check a stream it does not
    // write to in the same transaction, so those are checked by a read just before (the service never sends them).
    for (const a of prepared) if (a.events.length === 0) await this.checkExpectation(a.streamId, a.expectedState);
    const writes = prepared.filter((a) => a.events.length > 0);
    if (writes.length === 0) return { position: await this.reads.headPosition() };
    if (writes.length === 1) return { position: (await this.appendPrepared(writes[0], size)).position };

    const expected = new Map(writes.map((a) => [a.streamId, a.expectedState] as const));
    this.channel.used = true;
    const requests = writes.map((a) => ({
      streamName: a.streamId,
      events: a.events,
      expectedState: toClientStreamState(a.expectedState),
    }));
    try {
      return await appendWithRetry(
        async () => ({ position: toBigInt((await this.client.multiStreamAppend(requests)).position) }),
        async () => {
          // All or nothing: the append was atomic, so finding every stream's events means it was recorded.
          let position = -1n;
          for (const a of writes) {
            const found = await this.recordedAt(a);
            if (!found) return undefined;
            if (found.position > position) position = found.position;
          }
          return { position };
        },
        this.retry,
      );
    } catch (error) {
      throw toPortError(error, { expected, size });
    }
  }

  /**
   * Where an append's events are, when the stream holds them (same ids, in order) where the append put them: right
   * after the expected revision (from revision 0 for `no_stream`), so writes of others after them do not hide them;
   * for `any` and `exists`, which name no place, as the stream's last events. undefined when they are not there.
   */
  private async recordedAt(append: PreparedAppend): Promise<AppendResult | undefined> {
    const ids = append.events.map((e) => e.id);
    const expected = append.expectedState;
    const from = expected === 'no_stream' ? 0n : typeof expected === 'bigint' ? expected + 1n : undefined;
    const found: RecordedEvent[] = [];
    try {
      if (from === undefined) {
        for await (const event of this.reads.readStream(append.streamId, {
          direction: 'backwards',
          maxCount: ids.length,
        }))
          found.unshift(event);
      } else {
        for await (const event of this.reads.readStream(append.streamId, { fromRevision: from, maxCount: ids.length }))
          found.push(event);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return undefined;
      throw error;
    }
    if (found.length !== ids.length || found.some((event, i) => event.id !== ids[i])) return undefined;
    const newest = found[found.length - 1];
    return { nextExpectedRevision: newest.revision, position: newest.position };
  }

  private async appendPrepared(append: PreparedAppend, size: number): Promise<AppendResult> {
    const { streamId, expectedState } = append;
    this.channel.used = true;
    const send = async (): Promise<AppendResult> => {
      const result = await this.client.appendToStream(streamId, append.events, {
        streamState: toClientStreamState(expectedState),
      });
      // `success` is false only when the connection string sets throwOnAppendFailure=false.
      if (!result.success) {
        throw new WrongExpectedVersionError(
          streamId,
          expectedState,
          fromClientCurrentState(result.nextExpectedRevision),
        );
      }
      const position = result.position ? toBigInt(result.position.commit) : undefined;
      return {
        nextExpectedRevision: toBigInt(result.nextExpectedRevision),
        position: position ?? (await this.reads.lastEvent(streamId))?.position ?? (await this.reads.headPosition()),
      };
    };
    try {
      return await appendWithRetry(send, () => this.recordedAt(append), this.retry);
    } catch (error) {
      throw toPortError(error, { expected: new Map([[streamId, expectedState]]), streamId, size });
    }
  }

  /** An append without events: checks the expectation and reports the stream's current state. */
  async checkExpectation(streamId: string, expected: ExpectedState): Promise<AppendResult> {
    const last = await this.reads.lastEvent(streamId);
    const actual = last?.revision ?? 'no_stream';
    if (!expectationMet(expected, actual)) throw new WrongExpectedVersionError(streamId, expected, actual);
    const position = last && last.position >= 0n ? last.position : await this.reads.headPosition();
    return { nextExpectedRevision: last?.revision ?? -1n, position };
  }
}
