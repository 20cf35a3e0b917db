import type { EventStore } from '../ports/eventStore';
import type { ReadModelQueries } from '../ports/readModel';

/**
 * What reads are handed, each query declaring the part it touches: the read model's queries role and, for the reads
 * of the log itself (history, point-in-time, settings, uploads), the event store's read side. Never the whole
 * `Services` bag: it satisfies these structurally, so a route passes its `services` and the signature still says what
 * the read may touch (and nothing a read is given can write).
 */
export interface ReadModelDeps<Part extends keyof ReadModelQueries = keyof ReadModelQueries> {
  readModel: Pick<ReadModelQueries, Part>;
}

/** Reads of the log: streams (folded or listed) and the whole log by position. */
export interface LogDeps {
  eventStore: Pick<EventStore, 'readStream' | 'readAll'>;
}
