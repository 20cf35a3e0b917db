/**
 * A write that never began: the store's write lock stayed with another writer for the whole wait (on the embedded
 * SQLite file, another process's commit of a large copy or delete, or a tool). Nothing of the write was recorded, so
 * the same request may simply be sent again; the HTTP layer answers 503 with `Retry-After`.
 */
export class StoreBusyError extends Error {
  constructor(
    readonly waitedMs: number,
    options?: { cause?: unknown },
  ) {
    super(`another writer held the database for over ${waitedMs} ms`, options);
    this.name = 'StoreBusyError';
  }
}
