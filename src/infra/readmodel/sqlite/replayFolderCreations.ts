import { prepared } from '../../sqlite/preparedStatements';
import { RowBuffer } from './rowBuffer';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { ReadModelTx } from '../../../ports/readModel';
import { notStored } from '../notStored';
import { FOLDER_ROW_COLUMNS, folderRowValues, parentBase, type FolderBase, type NewFolder } from './foldersStore';
import type { SqliteHistory } from './historyStore';

/**
 * Folder creations of a replay, written in bulk (replay mode only, replayMode.ts). A live creation runs about ten
 * statements per folder (the parent's presence, base and ancestors, the row with its history triggers, the ancestry,
 * the ACL and the search rows); in a replay, where most of the log is creations, that per-statement overhead was a
 * large part of the CPU. Here a creation computes its rows in JS (the values of the live insert and of its triggers:
 * the folder, its ancestry from its parent's, its ACL entries, its search row, its placement and size at the event's
 * position) and adds them to one buffer per table; {@link ReplayFolderCreations.flush} writes each table's rows with
 * multi-row inserts, in creation order (the same rowids as the live inserts). The ACL rows are preceded by the delete
 * of the live `AclRows.replace`, and an ACL's entries keep their order (the last entry of a principal wins, as with
 * the live `INSERT OR REPLACE` per entry).
 *
 * Creations must be in the tables before anything else reads or writes them, so every write of the transaction
 * other than a creation flushes first ({@link deferringCreations}), and the batch flushes before its checkpoint is
 * written: what commits is what the live path commits.
 */
interface Placement {
  base: FolderBase;
  /** The folder's ancestors and their distance to it (its parent at 1). */
  ancestors: [string, number][];
}

export class ReplayFolderCreations {
  /** The event being applied: its position goes with the rows it creates. */
  position = 0n;
  /** Folders created since the last flush, and the placement their children inherit. */
  private readonly created = new Map<string, Placement>();
  /** Stored parents read since the last flush (nothing else writes the tables meanwhile). */
  private readonly stored = new Map<string, Placement | null>();
  private readonly folders: RowBuffer;
  private readonly ancestors: RowBuffer;
  private readonly acl: RowBuffer;
  private readonly search: RowBuffer;
  private readonly placements: RowBuffer;
  private readonly sizes: RowBuffer;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly history: SqliteHistory,
  ) {
    this.folders = new RowBuffer(
      db,
      `INSERT INTO rm_folders (${FOLDER_ROW_COLUMNS.join(', ')})`,
      FOLDER_ROW_COLUMNS.length,
    );
    this.ancestors = new RowBuffer(db, 'INSERT INTO rm_folder_ancestors (folder_id, ancestor_id, depth)', 3);
    this.acl = new RowBuffer(db, 'INSERT OR REPLACE INTO rm_acl (resource_id, principal_type, principal_id, level)', 4);
    this.search = new RowBuffer(db, 'INSERT INTO rm_folders_fts (id, name, description)', 3);
    this.placements = new RowBuffer(
      db,
      `INSERT OR REPLACE INTO rm_folder_tree (folder_id, from_position, to_position, parent_type, parent_id,
        base_parent_type, base_parent_id)`,
      7,
    );
    this.sizes = new RowBuffer(db, 'INSERT OR REPLACE INTO rm_folder_sizes (folder_id, position, size)', 3);
  }

  /**
   * Whether a folder is there for the writes that follow: created since the last flush (not in the tables yet), or
   * stored (read once per flush: creations under one parent ask for it once).
   */
  hasFolder(id: string): boolean {
    return this.created.has(id) || this.storedParent(id) !== null;
  }

  insert(doc: NewFolder): void {
    let placement: Placement;
    if (doc.parentCollection === 'folder') {
      const parent = this.created.get(doc.parentId) ?? this.storedParent(doc.parentId);
      // The projection guards the write on the parent (src/projections/lateEvents.ts).
      if (!parent) throw notStored('parent folder', doc.parentId, doc._id);
      const ancestors: [string, number][] = [[doc.parentId, 1]];
      for (const [id, depth] of parent.ancestors) ancestors.push([id, depth + 1]);
      placement = { base: parent.base, ancestors };
    } else {
      placement = { base: { type: doc.parentCollection, id: doc.parentId }, ancestors: [] };
    }
    this.created.set(doc._id, placement);
    const { base } = placement;
    this.folders.add(...folderRowValues(doc, base));
    for (const [id, depth] of placement.ancestors) this.ancestors.add(doc._id, id, depth);
    for (const entry of doc.access.users) this.acl.add(doc._id, 'user', entry.id, entry.level);
    for (const entry of doc.access.groups) this.acl.add(doc._id, 'group', entry.id, entry.level);
    this.search.add(doc._id, doc.name, doc.description);
    this.placements.add(doc._id, this.position, null, doc.parentCollection, doc.parentId, base.type, base.id);
    this.sizes.add(doc._id, this.position, doc.size);
  }

  /** Writes every creation since the last flush to the read-model tables. */
  flush(): void {
    this.stored.clear();
    if (this.created.size === 0) return;
    prepared(this.db, 'DELETE FROM rm_acl WHERE resource_id IN (SELECT value FROM json_each(?))').run(
      JSON.stringify([...this.created.keys()]),
    );
    this.created.clear();
    // The history rows are written here with each creation's position: the history triggers must not record them.
    this.history.during(null, () => {
      for (const rows of this.buffers()) rows.write();
    });
  }

  /** Forgets what was not flushed (its transaction rolled back). */
  discard(): void {
    this.stored.clear();
    this.created.clear();
    for (const rows of this.buffers()) rows.clear();
  }

  private buffers(): RowBuffer[] {
    return [this.folders, this.ancestors, this.acl, this.search, this.placements, this.sizes];
  }

  private storedParent(id: string): Placement | null {
    let placement = this.stored.get(id);
    if (placement === undefined) {
      const base = parentBase(this.db, id);
      placement = base && {
        base,
        ancestors: prepared(this.db, 'SELECT ancestor_id, depth FROM rm_folder_ancestors WHERE folder_id = ?')
          .raw(true)
          .all(id) as [string, number][],
      };
      this.stored.set(id, placement);
    }
    return placement;
  }
}

/**
 * The transaction's writes as a replay runs them: folder creations are buffered, and any other write first flushes
 * them, so it finds the tables as the live path leaves them. Presence checks need no flush: a buffered folder is
 * present, and buffered rows change no other row's presence.
 */
export function deferringCreations(tx: ReadModelTx, creations: ReplayFolderCreations): ReadModelTx {
  const flushingFirst = <T extends object>(target: T): T =>
    new Proxy(target, {
      get: (object, property) => {
        creations.flush();
        return Reflect.get(object, property) as unknown;
      },
    });
  const insert = (doc: NewFolder) => creations.insert(doc);
  const deferring: ReadModelTx = {
    ifPresent: (row, then, orElse) => {
      // Created and stored folders alike are known without a flush: creations stay buffered.
      if (row.kind === 'folder') return (creations.hasFolder(row.id) ? then : orElse)?.(deferring);
      tx.ifPresent(row, () => then(deferring), orElse && (() => orElse(deferring)));
    },
    users: flushingFirst(tx.users),
    groups: flushingFirst(tx.groups),
    tokens: flushingFirst(tx.tokens),
    apiKeys: flushingFirst(tx.apiKeys),
    collections: flushingFirst(tx.collections),
    folders: new Proxy(tx.folders, {
      get: (object, property) => {
        if (property === 'insert') return insert;
        creations.flush();
        return Reflect.get(object, property) as unknown;
      },
    }),
    items: flushingFirst(tx.items),
    files: flushingFirst(tx.files),
    subtree: flushingFirst(tx.subtree),
    history: flushingFirst(tx.history),
  };
  return deferring;
}
