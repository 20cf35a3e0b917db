import type { SqliteDatabase } from './openDatabase';

/** The page cache of the service's main connection, in KiB (SQLite's default is 2 MiB). */
const LIVE_CACHE_KIB = 65_536;
/** The WAL size (in pages) past which this connection's commits copy it back, when others append to the file. */
const CHECKPOINT_PAGES_WITH_APPENDS_ELSEWHERE = 16_384;

/**
 * Settings of the service's main connection, the one that projects and answers requests on the event loop. Must run
 * before any TEMP object exists (the history triggers and working tables), since changing temp_store drops them.
 *
 * - Statement journals in memory: every projection write runs inside a batch transaction, and a write with triggers
 *   keeps a statement journal (the original of each page it touches, to undo that statement alone) which SQLite
 *   spills to a temp file past 64 KiB: files opened, written and unlinked on the event loop, dozens a second while
 *   another process fed the projections.
 * - A 64 MiB page cache: with random ids a batch of creates touches pages all over the folder tables and their
 *   indexes; at a million rows the default 2 MiB cache re-read evicted pages with a pread each and spilled dirty ones
 *   to the WAL before the commit. The cache grows only as pages are read, so an idle service stays small.
 * - `appendsElsewhere` (the event log is in the same file, appended on the append worker's connection or by other
 *   processes): automatic WAL checkpoints on this connection only past 16,384 pages instead of 1,000. SQLite runs
 *   one in the commit that takes the WAL past the threshold, on whichever connection that is: here it copied ~4 MiB
 *   back into the file with two fsyncs, on the event loop, 10–30 ms several times a second while another process
 *   appended. The connections that append copy the WAL back off this loop (the service's append worker after it
 *   answered each group, src/infra/sqlite/walCheckpoints.ts; other processes' tools at SQLite's default); this one still does when its own commits alone grow the WAL (a long catch-up with no append meanwhile),
 *   so the WAL stays bounded. (With the log elsewhere, KurrentDB, this connection is the file's only writer and
 *   keeps the default.)
 *
 * Nothing here changes what is committed, nor when.
 */
export function tuneLiveConnection(db: SqliteDatabase, options: { appendsElsewhere: boolean }): void {
  tuneProjectingConnection(db);
  if (options.appendsElsewhere) db.pragma(`wal_autocheckpoint = ${CHECKPOINT_PAGES_WITH_APPENDS_ELSEWHERE}`);
}

/**
 * The statement journals in memory and the page cache of {@link tuneLiveConnection}, for any connection that projects
 * live (the main one, and the append worker's when appends project themselves, src/workers/appendProjectingWorker.ts).
 * Same rule: before any TEMP object exists on the connection.
 */
export function tuneProjectingConnection(db: SqliteDatabase): void {
  db.pragma('temp_store = MEMORY');
  db.pragma(`cache_size = -${LIVE_CACHE_KIB}`);
}
