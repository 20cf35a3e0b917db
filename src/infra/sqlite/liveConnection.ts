import type { SqliteDatabase } from './openDatabase';

/** The page cache of the service's main connection, in KiB (SQLite's default is 2 MiB). */
const LIVE_CACHE_KIB = 65_536;

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
 *
 * Nothing here changes what is committed, nor when.
 */
export function tuneLiveConnection(db: SqliteDatabase): void {
  db.pragma('temp_store = MEMORY');
  db.pragma(`cache_size = -${LIVE_CACHE_KIB}`);
}
