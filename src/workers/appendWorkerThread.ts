/** Worker thread entry of AppendWorker (src/infra/eventstore/sqlite/appendWorker.ts) for appends alone: tools and deployments without the
 * embedded read models. The service's, which also projects, is appendProjectingWorker.ts. */
import { serveAppendCommits } from '../infra/eventstore/sqlite/appendWorkerLoop';

serveAppendCommits();
