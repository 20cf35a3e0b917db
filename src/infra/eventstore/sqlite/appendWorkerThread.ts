/** Worker thread entry of AppendWorker (appendWorker.ts) for appends alone: tools and deployments without the
 * embedded read models. The service's, which also projects, is src/workers/appendProjectingWorker.ts. */
import { serveAppendCommits } from './appendWorkerLoop';

serveAppendCommits();
