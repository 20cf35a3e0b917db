import type { EventStore } from '../ports/eventStore';
import type { ReadModel } from '../ports/readModel';
import { Projector } from './projector';
import { readModelProjection } from '.';

/** Empties the read models and replays the whole log through the projections. Returns the number of events. */
export async function rebuild(store: EventStore, readModel: ReadModel, onProgress?: (events: number) => void): Promise<number> {
  await readModel.reset();
  const projector = new Projector(store, readModel, readModelProjection);
  let count = 0;
  for await (const event of store.readAll()) {
    await projector.applyEvent(event);
    if (++count % 1000 === 0) onProgress?.(count);
  }
  return count;
}
