/**
 * The bulk path that seeds large folder listings: real `ValueClaimed` + `FolderCreated` events, decided by the folder
 * decider exactly as `POST /folder` decides them, appended through the event store in batches (one transaction per
 * batch) on a connection of its own to the service's SQLite file. The service's projector picks them up like any
 * commit from another process, so the read models are built by the projections, never written directly.
 */
import path from 'node:path';
import { openDatabase, type SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { READ_MODELS_CHECKPOINT } from '../../src/projections/projector';
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite/sqliteEventStore';
import type { StreamAppend } from '../../src/ports/eventStore';
import type { AccessList } from '../../src/domain/access';
import { folderDecider, folderStateFor, folderStream } from '../../src/domain/folder';
import { claimValue, reservationDecider, siblingNameStream } from '../../src/domain/uniqueName';
import { toNewEvents } from '../../src/commands/streamHandle';
import { systemMeta } from '../../src/commands/requestMeta';
import { newId } from '../../src/domain/ids';
import { girderTime } from '../../src/domain/time';

/** Stays well inside the event store's 1 MiB per append. */
const FOLDERS_PER_APPEND = 500;
/** How far the service's projections may fall behind the seeder before it waits (a few batches' worth). */
const MAX_LAG_EVENTS = 4 * 2 * FOLDERS_PER_APPEND;

/**
 * Waits while the service's read models are more than {@link MAX_LAG_EVENTS} behind `head`. A writer that appends
 * back to back from another process keeps SQLite's write lock nearly all the time, and the service's own writers
 * (projection batches, lease renewals) then sleep in SQLite's busy handler, its event loop with them. Real writers
 * pace themselves: every command waits for its projection (read-your-writes); so does the seeder, a few batches
 * ahead, which keeps the service projecting while it seeds.
 */
async function whileProjectionLags(db: SqliteDatabase, head: bigint): Promise<void> {
  const checkpoint = db.prepare('SELECT position FROM rm_checkpoints WHERE projection = ?').pluck().safeIntegers();
  for (;;) {
    const projected = (checkpoint.get(READ_MODELS_CHECKPOINT) as bigint | undefined) ?? 0n;
    if (head - projected <= MAX_LAG_EVENTS) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface SeedParent {
  id: string;
  access: AccessList;
  public: boolean;
  creatorId: string;
}

/**
 * Appends `count` child folders named `<prefix><n>` (n zero-padded so names sort like numbers) under a folder, each
 * with the parent's ACL, or the one `accessOf(n)` gives.
 */
export async function seedChildFolders(
  dataDir: string,
  parent: SeedParent,
  count: number,
  prefix = 'child ',
  accessOf: (n: number) => AccessList = () => parent.access,
): Promise<void> {
  const db = openDatabase(path.join(dataDir, 'folder-service.sqlite'));
  const store = new SqliteEventStore(db);
  const meta = { ...systemMeta('bench-seed'), userId: parent.creatorId };
  const width = String(count).length;
  try {
    for (let start = 0; start < count; start += FOLDERS_PER_APPEND) {
      const appends: StreamAppend[] = [];
      for (let n = start; n < Math.min(count, start + FOLDERS_PER_APPEND); n++) {
        const folderId = newId();
        const name = `${prefix}${String(n).padStart(width, '0')}`;
        const events = folderDecider.decide(
          {
            type: 'CreateFolder',
            data: {
              folderId,
              name,
              description: '',
              parentType: 'folder',
              parentId: parent.id,
              creatorId: parent.creatorId,
              created: girderTime(),
              public: parent.public,
              access: accessOf(n),
            },
          },
          folderStateFor(folderId),
        );
        appends.push({
          streamId: siblingNameStream(parent.id, name),
          expectedState: 'no_stream',
          events: toNewEvents(
            reservationDecider.decide(claimValue(name, 'folder', folderId), reservationDecider.initialState()),
            meta,
          ),
        });
        appends.push({
          streamId: folderStream(folderId),
          expectedState: 'no_stream',
          events: toNewEvents(events, meta),
        });
      }
      const { position } = await store.appendToStreams(appends);
      await whileProjectionLags(db, position);
    }
  } finally {
    await store.dispose();
    db.close();
  }
}
