import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { ReadModel, ReadModelTx } from '../../../ports/readModel';
import { SqliteApiKeys, SqliteTokens, SqliteUsers } from './accountsStore';
import { SqliteCollections } from './collectionsStore';
import { SqliteGroups } from './groupsStore';
import { SqliteFolders } from './foldersStore';
import { SqliteFiles, SqliteItems } from './itemsStore';
import { SqliteSubtree } from './subtreeStore';
import { SqliteHistory } from './historyStore';
import { SqliteLeases } from './leasesStore';

/**
 * The embedded read models: tables prefixed `rm_` in the same SQLite file as the event log. One event's writes and
 * its projection checkpoint commit in one transaction, so a replayed event is skipped and a crash never leaves a
 * half-applied event behind.
 */
export class SqliteReadModel implements ReadModel {
  readonly users: SqliteUsers;
  readonly groups: SqliteGroups;
  readonly tokens: SqliteTokens;
  readonly apiKeys: SqliteApiKeys;
  readonly collections: SqliteCollections;
  readonly folders: SqliteFolders;
  readonly items: SqliteItems;
  readonly files: SqliteFiles;
  readonly subtree: SqliteSubtree;
  readonly history: SqliteHistory;
  readonly leases: SqliteLeases;
  private readonly tx: ReadModelTx;

  constructor(private readonly db: SqliteDatabase) {
    db.exec('CREATE TABLE IF NOT EXISTS rm_checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL)');
    this.users = new SqliteUsers(db);
    this.groups = new SqliteGroups(db);
    this.tokens = new SqliteTokens(db);
    this.apiKeys = new SqliteApiKeys(db);
    this.collections = new SqliteCollections(db);
    this.folders = new SqliteFolders(db);
    this.items = new SqliteItems(db, { folders: this.folders, users: this.users, collections: this.collections });
    this.files = new SqliteFiles(db);
    this.subtree = new SqliteSubtree(db);
    this.history = new SqliteHistory(db);
    this.leases = new SqliteLeases(db);
    this.tx = {
      users: this.users, groups: this.groups, tokens: this.tokens, apiKeys: this.apiKeys, collections: this.collections, folders: this.folders,
      items: this.items, files: this.files, subtree: this.subtree, history: this.history,
    };
  }

  async checkpoint(projection: string): Promise<bigint> {
    return this.readCheckpoint(projection);
  }

  private readCheckpoint(projection: string): bigint {
    const row = this.db
      .prepare('SELECT position FROM rm_checkpoints WHERE projection = ?')
      .safeIntegers(true)
      .get(projection) as { position: bigint } | undefined;
    return row ? row.position : 0n;
  }

  async apply(projection: string, position: bigint, write: (tx: ReadModelTx) => void): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.readCheckpoint(projection) >= position) return false;
      // The event's position is visible to the history index triggers while its writes run (historyStore.ts).
      this.history.during(position, () => write(this.tx));
      this.db
        .prepare('INSERT INTO rm_checkpoints (projection, position) VALUES (?, ?) ON CONFLICT(projection) DO UPDATE SET position = excluded.position')
        .run(projection, position);
      return true;
    })();
  }

  async reset(): Promise<void> {
    const tables = this.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\' AND name NOT LIKE '%fts\\_%' ESCAPE '\\'")
      .all() as { name: string }[];
    this.db.transaction(() => {
      for (const { name } of tables) this.db.prepare(`DELETE FROM "${name}"`).run();
    })();
  }

  async dump(): Promise<Record<string, unknown[]>> {
    const tables = this.db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\' AND name NOT LIKE '%fts\\_%' ESCAPE '\\' AND name != 'rm_checkpoints' ORDER BY name",
      )
      .all() as { name: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { name } of tables) {
      const rows = this.db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[];
      out[name] = rows.map((r) => JSON.stringify(r)).sort();
    }
    return out;
  }

  async dispose(): Promise<void> {
    /* the database handle belongs to whoever opened it */
  }
}
