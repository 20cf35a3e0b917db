import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { ReadModelTx } from '../../../ports/readModel';
import { notStored } from '../notStored';
import { folderRowValues, type NewFolder } from './foldersTable';
import { parentBase, type FolderBase } from './folderTree';
import type { SqliteHistory } from './historyStore';
import { CreationTables, type CreatedRows } from './creationTables';
import { nextSearchRowid } from './searchRows';

/**
 * Folder creations of a replay, written in bulk (replay mode only, replayMode.ts). A live creation runs about ten
 * statements per folder (the parent's presence and base, the row with its history triggers, the ACL and the search
 * rows); in a replay, where most of the log is creations, that per-statement overhead was a
 * large part of the CPU. Here a creation computes its rows in JS (the values of the live insert and of its triggers:
 * the folder, its ACL entries, its search row, its placement and size at the event's
 * position) and adds them to one buffer per table (creationTables.ts); {@link ReplayFolderCreations.flush} writes
 * each table's rows with multi-row inserts, in creation order (the same rowids as the live inserts). The ACL rows are
 * preceded by the delete of the live `AclRows.replace`, and an ACL's entries keep their order (the last entry of a
 * principal wins, as with the live `INSERT OR REPLACE` per entry).
 *
 * Creations must be in the tables before anything else reads or writes them, so every write of the transaction
 * other than a creation flushes first ({@link deferringCreations}), and the batch flushes before its checkpoint is
 * written: what commits is what the live path commits.
 *
 * A batch of creations alone under folders whose placement is known here can also be *planned* without reading the
 * tables ({@link planningCreations}): its rows are then taken ({@link ReplayFolderCreations.take}) and written by the
 * replay's writer thread (replayWriter.ts) while this thread reads and plans the next batch.
 */
/**
 * Parents remembered at most (then forgotten all at once). A placement forgotten is read from the tables again when
 * needed (a planned batch then gives way to one replayed on the main thread, which reads it).
 */
const MAX_PARENTS = 10_000;

/** Thrown while planning when a write needs the tables (replayed on this thread instead). */
class NeedsTables extends Error {
  constructor() {
    super('This write reads or writes the read-model tables: it cannot be planned.');
  }
}

export class ReplayFolderCreations {
  /** The event being applied: its position goes with the rows it creates. */
  position = 0n;
  /**
   * While a batch is planned: the tables may lag behind the creations planned so far (the writer thread writes them),
   * so a placement not known here ends the plan ({@link NeedsTables}) instead of being read.
   */
  planning = false;
  /** Folders created since the last flush or take, and their placement. */
  private created = new Map<string, FolderBase>();
  /** The folders created before them, up to the flush or take before (a batch's creations, in a replay). */
  private recent = new Map<string, FolderBase>();
  /**
   * Placements of parents (folders that creations were made under), known without reading the tables: created in
   * this replay or read. Creations change no other folder's placement; any other write may (a move, a delete), so it
   * forgets them all ({@link forgetPlacements}), and the recent creations' too. Only parents are kept longer than a
   * batch: a log creates many more folders than it creates folders under.
   */
  private readonly parents = new Map<string, FolderBase>();
  /**
   * The search key (searchRows.ts) of the next creation: read from the search table after any other write (which may
   * add search rows), then counted here while creations alone follow, as the live inserts would number them.
   */
  private searchRowid: number | null = null;
  private readonly tables: CreationTables;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly history: SqliteHistory,
  ) {
    this.tables = new CreationTables(db);
  }

  /** Whether a folder is there for the writes that follow: created in this replay, or stored. */
  hasFolder(id: string): boolean {
    return this.baseOf(id) !== null;
  }

  insert(doc: NewFolder): void {
    let base: FolderBase;
    if (doc.parentCollection === 'folder') {
      const parentBase = this.baseOf(doc.parentId);
      // The projection guards the write on the parent (src/projections/lateEvents.ts).
      if (!parentBase) throw notStored('parent folder', doc.parentId, doc._id);
      base = parentBase;
    } else {
      base = { type: doc.parentCollection, id: doc.parentId };
    }
    this.created.set(doc._id, base);
    const { tables } = this;
    const searchRowid = this.nextSearchRowid();
    tables.folders.add(...folderRowValues(doc, base, searchRowid));
    for (const entry of doc.access.users) tables.acl.add(doc._id, 'user', entry.id, entry.level);
    for (const entry of doc.access.groups) tables.acl.add(doc._id, 'group', entry.id, entry.level);
    tables.search.add(searchRowid, doc._id, doc.name, doc.description);
    tables.placements.add(doc._id, this.position, null, doc.parentCollection, doc.parentId, base.type, base.id);
    tables.sizes.add(doc._id, this.position, doc.size);
  }

  /** Hands over the rows of the creations since the last flush or take, to be written elsewhere (null: none). */
  take(): CreatedRows | null {
    const rows = this.tables.take([...this.created.keys()]);
    this.recent = this.created;
    this.created = new Map();
    return rows;
  }

  /** Writes every creation since the last flush to the read-model tables. */
  flush(): void {
    const rows = this.take();
    if (!rows) return;
    // The history rows are written here with each creation's position: the history triggers must not record them.
    this.history.during(null, () => this.tables.write(rows));
  }

  /** Before a write other than a creation: the placements and the next search key known may not hold after it. */
  forgetPlacements(): void {
    this.parents.clear();
    this.recent.clear();
    this.searchRowid = null;
  }

  /** Forgets what was not flushed (its transaction rolled back, or its plan was given up). */
  discard(): void {
    this.created = new Map();
    this.tables.clear();
    this.forgetPlacements();
  }

  private remember(id: string, base: FolderBase): FolderBase {
    if (this.parents.size >= MAX_PARENTS) this.parents.clear();
    this.parents.set(id, base);
    return base;
  }

  private nextSearchRowid(): number {
    if (this.searchRowid === null) {
      // While planning, the table may lag behind the creations planned (the writer thread writes them).
      if (this.planning) throw new NeedsTables();
      this.searchRowid = nextSearchRowid(this.db, 'rm_folders');
    }
    return this.searchRowid++;
  }

  /** The folder's base parent (root), which its new children inherit. */
  private baseOf(id: string): FolderBase | null {
    const known = this.parents.get(id);
    if (known) return known;
    const created = this.created.get(id) ?? this.recent.get(id);
    if (created) return this.remember(id, created);
    if (this.planning) throw new NeedsTables();
    const base = parentBase(this.db, id);
    return base && this.remember(id, base);
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
        creations.forgetPlacements();
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
        creations.forgetPlacements();
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

/**
 * The writes of a batch being planned (see {@link ReplayFolderCreations.planning}): folder creations under folders
 * whose placement is known, and presence checks of such folders. Anything else needs the tables and ends the plan
 * ({@link NeedsTables}); the batch is then replayed on this thread, through {@link deferringCreations}.
 */
export function planningCreations(creations: ReplayFolderCreations): ReadModelTx {
  const refusing = <T extends object>(): T =>
    new Proxy({} as T, {
      get: () => {
        throw new NeedsTables();
      },
    });
  const insert = (doc: NewFolder) => creations.insert(doc);
  const planning: ReadModelTx = {
    ifPresent: (row, then, orElse) => {
      if (row.kind !== 'folder') throw new NeedsTables();
      return (creations.hasFolder(row.id) ? then : orElse)?.(planning);
    },
    users: refusing(),
    groups: refusing(),
    tokens: refusing(),
    apiKeys: refusing(),
    collections: refusing(),
    folders: new Proxy({} as ReadModelTx['folders'], {
      get: (_object, property) => {
        if (property === 'insert') return insert;
        throw new NeedsTables();
      },
    }),
    items: refusing(),
    files: refusing(),
    subtree: refusing(),
    history: refusing(),
  };
  return planning;
}
