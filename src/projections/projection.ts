import type { RecordedEvent } from '../ports/eventStore';
import type { ProjectionReads, ReadModelTx } from '../ports/readModel';
import type { DomainEvent } from '../domain/decider';
import { ownValue } from '../domain/ownMap';

/**
 * A projection maps events to read-model writes. A handler is synchronous and never reads: everything it needs is in
 * the event (or derived by the adapter's write methods), which keeps it deterministic and lets each adapter apply an
 * event's writes and the checkpoint atomically (better-sqlite3 cannot keep a transaction open across an `await`). A
 * write that holds only while a row is there (a late event's, lateEvents.ts) is made conditional: `tx.ifPresent`.
 *
 * A handler whose writes depend on the read model as it stands (which folders a recursive access change reaches, or
 * whether a subtree event names a folder a delete already removed) is {@link planned}: its `plan` reads first,
 * asynchronously, through the generic set-wise reads of {@link ProjectionReads}; its `apply` then writes what the
 * plan decided, synchronously, in the event's transaction. The projector plans an event only once every earlier event
 * is applied (it applies a pending batch first), and it is the single, fenced writer, so the plan still holds when the
 * writes run. The rules live here, once, instead of in each adapter.
 */
type WriteHandler<D = unknown> = (event: RecordedEvent<D>, tx: ReadModelTx) => void;

export interface PlannedHandler<D = unknown, P = unknown> {
  /** Whether this event needs a plan (default: every event of the type); without one, `apply` gets `null`. */
  needsPlan?: (event: RecordedEvent<D>) => boolean;
  plan(event: RecordedEvent<D>, reads: ProjectionReads): Promise<P>;
  apply(event: RecordedEvent<D>, tx: ReadModelTx, plan: P | null): void;
}

type Handler<D = unknown> = WriteHandler<D> | PlannedHandler<D>;

export interface Projection {
  /** Event type → handler. Types a projection does not list are ignored by it. */
  handlers: Partial<Record<string, Handler>>;
}

/** A handler that reads (plans) before it writes; see the top of this file. */
export const planned = <D, P>(handler: PlannedHandler<D, P>): PlannedHandler<D, P> => handler;

/**
 * One handler for every event type of the union `E`, each receiving its own event's data type. A projection built
 * with {@link projectionOf} must list every type: an event type added to an aggregate but not handled (or handled
 * under a misspelt name) is a compile error there.
 */
export type EventHandlers<E extends DomainEvent> = {
  [T in E['type']]: Handler<Extract<E, { type: T }>['data']>;
};

/**
 * The table keys each handler by its event type and types its data `unknown`: here, for a generic `E`, the compiler
 * relates the handlers through `E`'s constraint (`DomainEvent`, whose data is `unknown`), which is that erasure, with
 * no `any` and no cast. It is sound because dispatch by `event.type` hands each handler its own type's events, whose
 * data was checked against that type's schema when decided (src/domain/decider.ts).
 */
export const projectionOf = <E extends DomainEvent>(handlers: EventHandlers<E>): Projection => ({ handlers });

const asPlanned = (handler: Handler): PlannedHandler =>
  typeof handler === 'function'
    ? { needsPlan: () => false, plan: async () => null, apply: (event, tx) => handler(event, tx) }
    : handler;

/** The projection's handler of the event's type: its own entry only (a stored type `constructor` has none). */
const handlerOf = (projection: Projection, event: RecordedEvent): Handler | undefined =>
  ownValue(projection.handlers, event.type);

/** Whether the projection's handler of `event` must plan (read) before its writes can be made. */
export function needsPlan(projection: Projection, event: RecordedEvent): boolean {
  const handler = handlerOf(projection, event);
  if (!handler || typeof handler === 'function') return false;
  return handler.needsPlan?.(event) ?? true;
}

/**
 * The writes of `event`: plans first when its handler needs it (reading through `reads`), then returns the
 * synchronous write to run in the event's transaction. Call it only once every earlier event is applied.
 */
export async function writerOf(
  projection: Projection,
  event: RecordedEvent,
  reads: ProjectionReads,
): Promise<(tx: ReadModelTx) => void> {
  const handler = handlerOf(projection, event);
  if (!handler) return () => undefined;
  if (typeof handler === 'function') return (tx) => handler(event, tx);
  const plan = needsPlan(projection, event) ? await handler.plan(event, reads) : null;
  return (tx) => handler.apply(event, tx, plan);
}

/** The writes of an event that needs no plan ({@link needsPlan} false), without waiting. */
export function unplannedWriterOf(projection: Projection, event: RecordedEvent): (tx: ReadModelTx) => void {
  const handler = handlerOf(projection, event);
  if (!handler) return () => undefined;
  if (typeof handler === 'function') return (tx) => handler(event, tx);
  return (tx) => handler.apply(event, tx, null);
}

/**
 * Merges projections into one dispatch table. Two projections may handle the same event type: its handlers run in the
 * order the projections are given, in the event's transaction; if either of them plans, the merged handler plans for
 * both (each plan read only when its own handler needs it) before either writes.
 */
export function combineProjections(...projections: Projection[]): Projection {
  const handlers = new Map<string, Handler>();
  for (const projection of projections) {
    for (const [type, handler] of Object.entries(projection.handlers)) {
      if (!handler) continue;
      const previous = handlers.get(type);
      if (!previous) {
        handlers.set(type, handler);
      } else if (typeof previous === 'function' && typeof handler === 'function') {
        handlers.set(type, (event, tx) => {
          previous(event, tx);
          handler(event, tx);
        });
      } else {
        const [first, second] = [asPlanned(previous), asPlanned(handler)];
        const wants = (h: PlannedHandler, event: RecordedEvent) => h.needsPlan?.(event) ?? true;
        handlers.set(
          type,
          planned<unknown, [unknown, unknown]>({
            needsPlan: (event) => wants(first, event) || wants(second, event),
            plan: async (event, reads) => [
              wants(first, event) ? await first.plan(event, reads) : null,
              wants(second, event) ? await second.plan(event, reads) : null,
            ],
            apply: (event, tx, plans) => {
              first.apply(event, tx, plans?.[0] ?? null);
              second.apply(event, tx, plans?.[1] ?? null);
            },
          }),
        );
      }
    }
  }
  return { handlers: Object.fromEntries(handlers) };
}
