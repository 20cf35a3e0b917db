import type { RecordedEvent } from '../ports/eventStore';
import type { ReadModelTx } from '../ports/readModel';
import type { DomainEvent } from '../domain/decider';

/**
 * A projection maps events to read-model writes. Handlers are synchronous and never read: everything they need is
 * in the event (or derived by the adapter's write methods), which keeps them deterministic and lets each adapter
 * apply an event's writes and the checkpoint atomically.
 */
export interface Projection {
  /**
   * Event type → handler. Types a projection does not list are ignored by it. Each handler takes its own type's data,
   * which one record type cannot say per key: callers pass the event whose type they looked the handler up by.
   */
  handlers: Partial<Record<string, (event: RecordedEvent<never>, tx: ReadModelTx) => void>>;
}

/**
 * One handler for every event type of the union `E`, each receiving its own event's data type. A projection built
 * with {@link projectionOf} must list every type: an event type added to an aggregate but not handled (or handled
 * under a misspelt name) is a compile error there.
 */
export type EventHandlers<E extends DomainEvent> = {
  [T in E['type']]: (event: RecordedEvent<Extract<E, { type: T }>['data']>, tx: ReadModelTx) => void;
};

export const projectionOf = <E extends DomainEvent>(handlers: EventHandlers<E>): Projection => ({ handlers });

/** Merges projections into one dispatch table; two projections may not claim the same event type. */
export function combineProjections(...projections: Projection[]): Projection {
  const handlers: Projection['handlers'] = {};
  for (const projection of projections) {
    for (const [type, handler] of Object.entries(projection.handlers)) {
      if (!handler) continue;
      const previous = handlers[type];
      handlers[type] = previous
        ? (event, tx) => {
            previous(event, tx);
            handler(event, tx);
          }
        : handler;
    }
  }
  return { handlers };
}
