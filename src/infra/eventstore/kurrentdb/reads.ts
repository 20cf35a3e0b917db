import {
  BACKWARDS,
  END,
  FORWARDS,
  START,
  excludeSystemEvents,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type Filter,
} from '@kurrent/kurrentdb-client';
import {
  StreamNotFoundError,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
} from '../../../ports/eventStore';
import { commitPositionOf, fromResolvedEvent, toClientPosition, toPortError } from './mapping';
import type { KurrentClient } from './client';

/**
 * Reads of the KurrentDB event store: one stream (with the positions the server left out looked up in `$all`),
 * `$all` under the store's stream filter, the head and a stream's last event. Every read starts at a position an
 * event gave (KurrentDB refuses others) or at the start or end.
 */
export class KurrentReads {
  readonly defaultPrefixes: string[];

  constructor(
    private readonly client: KurrentClient,
    streamPrefixes: readonly string[] | undefined,
  ) {
    this.defaultPrefixes = normalisePrefixes(streamPrefixes);
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return;
    const backwards = options.direction === 'backwards';
    const events = this.client.readStream(streamId, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision: options.fromRevision ?? (backwards ? END : START),
      maxCount: options.maxCount,
      resolveLinkTos: false,
    });
    const positions = new StreamPositions(streamId);
    try {
      for await (const resolved of events) {
        const event = fromResolvedEvent(resolved);
        if (!event) continue;
        // The server leaves the position out of some stream reads; the port promises one (history, point in time
        // and catch-up order events by it).
        if (event.position < 0n && options.positions !== false)
          event.position = await positions.of(event.id, (from) => this.readStreamInAll(streamId, from));
        yield event;
      }
    } catch (error) {
      throw toPortError(error, { streamId });
    }
  }

  /** The events of one stream as `$all` has them (with positions), after `from` (an event's position, or 0n). */
  private readStreamInAll(streamId: string, from: bigint): AsyncIterable<AllStreamResolvedEvent> {
    return this.client.readAll({
      direction: FORWARDS,
      fromPosition: from === 0n ? START : toClientPosition(from),
      filter: streamNameFilter({ regex: `^${escapeRegExp(streamId)}$` }),
      resolveLinkTos: false,
    });
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const maxCount = options.maxCount ?? Infinity;
    if (maxCount <= 0) return;
    const backwards = options.direction === 'backwards';
    const from = options.fromPosition ?? 0n;
    // The port's fromPosition is exclusive; the server's is inclusive going forwards, so one more is asked for and
    // anything at or beyond `from` is dropped (in either direction, which also covers older servers).
    const events = this.client.readAll({
      direction: backwards ? BACKWARDS : FORWARDS,
      fromPosition: from === 0n ? (backwards ? END : START) : toClientPosition(from),
      maxCount: Number.isFinite(maxCount) ? maxCount + (from === 0n ? 0 : 1) : undefined,
      filter: this.filterFor(options.streamPrefixes),
      resolveLinkTos: false,
    });
    let delivered = 0;
    try {
      for await (const resolved of events) {
        const event = fromResolvedEvent(resolved);
        if (!event) continue;
        if (from !== 0n && (backwards ? event.position >= from : event.position <= from)) continue;
        yield event;
        if (++delivered >= maxCount) return;
      }
    } catch (error) {
      throw toPortError(error);
    }
  }

  async streamRevision(streamId: string): Promise<bigint | 'no_stream'> {
    return (await this.lastEvent(streamId))?.revision ?? 'no_stream';
  }

  /** Position of the last event under the default filter (the service's streams): what the projector can reach. */
  async headPosition(): Promise<bigint> {
    return this.lastPosition(this.defaultPrefixes);
  }

  /** Position of the last event under `prefixes` (0n when there is none). */
  async lastPosition(prefixes: string[]): Promise<bigint> {
    try {
      for await (const resolved of this.client.readAll({
        direction: BACKWARDS,
        fromPosition: END,
        maxCount: 1,
        filter: this.filterFor(prefixes),
        resolveLinkTos: false,
      })) {
        const position = commitPositionOf(resolved);
        if (position >= 0n) return position;
      }
      return 0n;
    } catch (error) {
      throw toPortError(error);
    }
  }

  /** A stream's last event; undefined when the stream does not exist. */
  async lastEvent(streamId: string): Promise<RecordedEvent | undefined> {
    try {
      for await (const event of this.readStream(streamId, { direction: 'backwards', maxCount: 1 })) return event;
      return undefined;
    } catch (error) {
      if (error instanceof StreamNotFoundError) return undefined;
      throw error;
    }
  }

  /** The server-side filter for `prefixes` (the store's default when undefined; system events excluded when none). */
  filterFor(prefixes: readonly string[] | undefined): Filter {
    const list = prefixes === undefined ? this.defaultPrefixes : normalisePrefixes(prefixes);
    return list.length > 0 ? streamNameFilter({ prefixes: list }) : excludeSystemEvents();
  }
}

/**
 * Positions of one stream's events, looked up in `$all` (filtered to the stream) when a stream read came without
 * them: one forward read for the whole stream, continued from the last position found when a later event is asked
 * for. Reads start only at positions `$all` gave.
 */
class StreamPositions {
  private readonly byId = new Map<string, bigint>();
  private last = 0n;

  constructor(private readonly streamId: string) {}

  async of(eventId: string, read: (from: bigint) => AsyncIterable<AllStreamResolvedEvent>): Promise<bigint> {
    const known = this.byId.get(eventId);
    if (known !== undefined) return known;
    for await (const resolved of read(this.last)) {
      const position = commitPositionOf(resolved);
      const id = resolved.event?.id;
      if (position < 0n || id === undefined || resolved.event?.streamId !== this.streamId) continue;
      this.byId.set(id, position);
      if (position > this.last) this.last = position;
    }
    const found = this.byId.get(eventId);
    if (found === undefined)
      throw new Error(`KurrentDB: event ${eventId} of ${this.streamId} has no position in $all.`);
    return found;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function normalisePrefixes(prefixes: readonly string[] | undefined): string[] {
  return prefixes ? [...new Set(prefixes)] : [];
}

export function samePrefixes(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((p) => b.includes(p));
}
