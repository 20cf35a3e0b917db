/**
 * Where the bulk worker's progress goes (src/infra/readmodel/sqlite/bulkApply.ts): entries of a large subtree event
 * done so far, for the request that caused it, keyed by the `requestId` of the event's metadata.
 * `BulkProgressBus` (src/bus/bulkProgress.ts) implements it and hands the reports to the route following the request.
 */
export interface BulkProgressReports {
  /** Whether a report for `requestId` would reach anyone (when not, the worker does not even count). */
  wanted(requestId: string): boolean;
  report(requestId: string, entriesDone: number): void;
}
