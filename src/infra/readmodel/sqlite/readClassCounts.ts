import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { AccessList, Viewer } from '../../../domain/access';
import type { ParentType } from '../../../domain/parents';
import { readClassSql } from './readClassIndex';
import { tableExists } from './sqlHelpers';

/**
 * Per-parent counts of child folders by *read class*, so that an ordinary user's `Girder-Total-Count` is a sum over a
 * handful of rows instead of a count of every sibling through the ACL.
 *
 * A folder's read class is who may READ it, as one key: `public` for a public folder (everyone, anonymous viewers
 * included), otherwise its ACL as the document holds it (`{"users":[{"id":…,"level":…,"flags":[]}],"groups":[…]}`;
 * every entry grants at least READ, and an empty ACL is readable by site admins only). It is the same rule as
 * `readableSql`: the `public` column, or an `rm_acl` row of the viewer or one of the viewer's groups (both written
 * from `doc.access`). Siblings mostly share their ACL (a new folder inherits its parent's), so a parent has few
 * classes whatever the number of its children. The key is the ACL's JSON text, not a canonical set of principals:
 * two equivalent ACLs written differently only make two rows, and extracting it costs one JSON lookup per write
 * (sorting the principals in SQL cost ~90 µs per inserted folder, more than the insert itself).
 *
 * The counts are kept by triggers on `rm_folders` (like `rm_folder_child_counts`), so every write path keeps them
 * exact: creations, updates, access changes (recursive ones are one set-wise UPDATE), moves, subtree copies, deletes
 * and restores, and the replay of a rebuild. A row whose count reaches zero is deleted, so the table is a pure function
 * of `rm_folders` (whatever the order of the writes that led there; `verify` compares it too). Group membership is
 * not in the key: which classes a viewer reads is decided per request from the viewer's groups, so a membership
 * change needs no maintenance here.
 */

const increment = `
  INSERT INTO rm_folder_read_counts (parent_id, parent_type, read_class, n) VALUES (new.parent_id, new.parent_type, ${readClassSql('new')}, 1)
  ON CONFLICT (parent_id, parent_type, read_class) DO UPDATE SET n = n + 1;`;
const decrement = `
  UPDATE rm_folder_read_counts SET n = n - 1 WHERE parent_id = old.parent_id AND parent_type = old.parent_type AND read_class = ${readClassSql('old')};
  DELETE FROM rm_folder_read_counts WHERE parent_id = old.parent_id AND parent_type = old.parent_type AND n = 0;`;

const DDL = `
CREATE TABLE IF NOT EXISTS rm_folder_read_counts (
  parent_id TEXT NOT NULL, parent_type TEXT NOT NULL, read_class TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (parent_id, parent_type, read_class)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS rm_folders_read_count_insert AFTER INSERT ON rm_folders BEGIN ${increment} END;
CREATE TRIGGER IF NOT EXISTS rm_folders_read_count_delete AFTER DELETE ON rm_folders BEGIN ${decrement} END;
CREATE TRIGGER IF NOT EXISTS rm_folders_read_count_update AFTER UPDATE OF parent_id, parent_type, public, doc ON rm_folders
WHEN old.parent_id IS NOT new.parent_id OR old.parent_type IS NOT new.parent_type OR old.public IS NOT new.public
  OR (old.doc -> '$.access') IS NOT (new.doc -> '$.access')
BEGIN ${decrement} ${increment} END;
`;

/** The counts of `rm_folders` by parent and read class: the table's rows (parent_id, parent_type, read_class, n). */
export const COUNT_READ_CLASSES = `SELECT parent_id, parent_type, read_class, COUNT(*) FROM (
    SELECT parent_id, parent_type, ${readClassSql('new')} AS read_class FROM rm_folders new)
  GROUP BY parent_id, parent_type, read_class`;

/**
 * Creates the table and its triggers; counts a file from before them once (the triggers keep it from then on).
 * `counted`: the rows of {@link COUNT_READ_CLASSES}, already read on another connection (a replay's writer thread,
 * while this one built the other derived state).
 */
export function ensureReadClassCounts(db: SqliteDatabase, counted?: unknown[][]): void {
  const existed = tableExists(db, 'rm_folder_read_counts');
  db.exec(DDL);
  if (existed) return;
  const insert = 'INSERT INTO rm_folder_read_counts (parent_id, parent_type, read_class, n)';
  if (!counted) {
    db.exec(`${insert} ${COUNT_READ_CLASSES}`);
    return;
  }
  const row = db.prepare(`${insert} VALUES (?, ?, ?, ?)`);
  for (const values of counted) row.run(values);
}

/** Whether a viewer (not a site admin; null when anonymous) may READ folders of the class. */
function readableClass(readClass: string, viewer: Viewer | null): boolean {
  if (readClass === 'public') return true;
  if (!viewer) return false;
  const access = JSON.parse(readClass) as AccessList;
  return (
    access.users.some((entry) => entry.id === viewer.id) ||
    access.groups.some((entry) => viewer.groups.includes(entry.id))
  );
}

/**
 * The parent's child folders that the viewer may READ, and all of them, from the maintained counts, with the read
 * classes of those the viewer reads: the cost is the number of distinct ACLs among the children, not the number of
 * children.
 */
export function readableChildCount(
  db: SqliteDatabase,
  parentType: ParentType,
  parentId: string,
  viewer: Viewer | null,
): { readable: number; all: number; readableClasses: string[] } {
  const rows = prepared(
    db,
    'SELECT read_class, n FROM rm_folder_read_counts WHERE parent_id = ? AND parent_type = ?',
  ).all(parentId, parentType) as { read_class: string; n: number }[];
  let readable = 0;
  let all = 0;
  const readableClasses: string[] = [];
  for (const { read_class, n } of rows) {
    all += n;
    if (!readableClass(read_class, viewer)) continue;
    readable += n;
    readableClasses.push(read_class);
  }
  return { readable, all, readableClasses };
}
