/**
 * The ReadModel port, split by role (one file each under ./readModel/):
 *  - documents.ts: the documents every role speaks in (shaped like Girder's Mongo documents);
 *  - queries.ts: what routes, queries and commands read ({@link ReadModelQueries}, `services.readModel`);
 *  - projectionWrites.ts: what projections write ({@link ReadModelTx}) and the reads a handler's plan makes
 *    ({@link ProjectionReads});
 *  - history.ts: removed documents, placements and sizes over time, keep and restore (required of every adapter);
 *  - projectorStore.ts: checkpoint, apply/applyBatch, leases and fencing, reset, dump, dispose ({@link
 * ProjectorStore}).
 * Consumers depend on the narrowest role they use; an adapter implements them all ({@link ReadModel}).
 */
import type { ReadModelQueries } from './readModel/queries';
import type { ProjectorStore } from './readModel/projectorStore';

export type * from './readModel/documents';
export type * from './readModel/queries';
export type * from './readModel/history';
export type * from './readModel/projectionWrites';
export * from './readModel/projectorStore';

/** What an adapter implements: every role (src/bootstrap.ts hands each consumer the role it needs). */
export type ReadModel = ReadModelQueries & ProjectorStore;
