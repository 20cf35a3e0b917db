/**
 * Worker thread entry of the service's AppendWorker (src/infra/eventstore/sqlite/appendWorker.ts) on the embedded
 * deployment: each group's transaction appends, then projects what it appended (projectAppended.ts,
 * src/ports/projectionInAppend.ts), so that a write is visible to every reader the moment its commit returns. It is a
 * wiring entry (src/workers/), not part of the adapter, because it wires the event store, the read model and the
 * projections together.
 */
import { serveAppendCommits } from '../infra/eventstore/sqlite/appendWorkerLoop';

// The read model and the projections are loaded with the first write to project, from a bundle of their own
// (scripts/build.ts): parsed and evaluated at start-up they added 10 MB to the idle service (docs/performance.md).
serveAppendCommits((db) => (require('./projectAppended') as typeof import('./projectAppended')).projectAppendedOn(db));
