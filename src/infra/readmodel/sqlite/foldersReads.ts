import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { FolderDoc, FolderListing, FolderQueries, Page, PositionIn, PrefixSearch } from '../../../ports/readModel';
import type { Level, Viewer } from '../../../domain/access';
import { ftsQuery, namePrefixSql, pagingSql, readableSql } from './sqlHelpers';
import { listingScans, type HeavyReads } from './heavyReads';
import { ancestorsSql, descendantsSql, ensureWalkIndex } from './folderTree';
import { readableChildCount } from './readClassCounts';
import { MAX_MERGED_CLASSES, readClassesPageSql } from './readClassIndex';
import type { Paging } from '../../../domain/paging';
import type { ParentType } from '../../../domain/parents';
import { COLUMNS, FOLDER_COLUMNS, folderRow, LISTED, SELECT, toDoc, type FolderRow } from './foldersTable';

/** Sorts an index of a parent's children serves (rm_folders_parent_sort, rm_folders_parent_name). */
const INDEX_SERVED_SORTS = new Set(['lowerName', 'name']);

/**
 * The WHERE clauses of a parent's listing: its children the viewer may read, with the name or text asked for; null
 * when the text can match nothing.
 */
function childClauses(o: {
  parentType: ParentType;
  parentId: string;
  viewer: Viewer | null;
  name?: string;
  text?: string;
}): { clauses: string[]; args: unknown[] } | null {
  const filter = readableSql('f', o.viewer);
  const clauses = ['f.parent_id = ?', 'f.parent_type = ?', filter.sql];
  const args: unknown[] = [o.parentId, o.parentType, ...filter.args];
  if (o.name !== undefined) {
    clauses.push('f.name = ?');
    args.push(o.name);
  }
  if (o.text !== undefined) {
    const query = ftsQuery(o.text);
    if (query === null) return null;
    clauses.push('f.id IN (SELECT id FROM rm_folders_fts WHERE rm_folders_fts MATCH ?)');
    args.push(query);
  }
  return { clauses, args };
}

/** The folder queries of the SQLite read model (the tables: foldersTable.ts; the projection writes: foldersWrites.ts). */
export class SqliteFolderReads implements FolderQueries {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly heavy: HeavyReads,
  ) {}

  async get(id: string) {
    const row = folderRow(this.db, `${SELECT} WHERE f.id = ?`, id);
    return row ? toDoc(row) : null;
  }

  async getMany(ids: string[]) {
    const rows = prepared<unknown[], FolderRow>(this.db, `${SELECT} WHERE f.id IN (SELECT value FROM json_each(?))`)
      .raw(true)
      .all(JSON.stringify(ids));
    const byId = new Map(rows.map((r) => [r[0], toDoc(r)]));
    return ids.map((id) => byId.get(id)).filter((d): d is FolderDoc => d !== undefined);
  }

  async listChildren(o: {
    parentType: ParentType;
    parentId: string;
    viewer: Viewer | null;
    name?: string;
    text?: string;
    paging: Paging;
  }) {
    const filter = readableSql('f', o.viewer);
    const matching = childClauses(o);
    if (matching === null) return { rows: [], total: 0 };
    const { clauses, args } = matching;
    const heavy = listingScans(o, o.paging, INDEX_SERVED_SORTS);
    if (o.name !== undefined || o.text !== undefined)
      return this.page(`WHERE ${clauses.join(' AND ')}`, args, o.paging, { heavy });
    // Every child passes a site admin's unfiltered listing: its total is the maintained count.
    if (o.viewer?.admin)
      return this.page(`WHERE ${clauses.join(' AND ')}`, args, o.paging, {
        heavy,
        total: this.maintainedCount(o.parentType, o.parentId),
      });
    const { readable, all, readableClasses } = readableChildCount(this.db, o.parentType, o.parentId, o.viewer);
    if (readable === 0) return { rows: [], total: 0 };
    // The viewer reads every child: the page is the unfiltered walk of the parent's sort index.
    if (readable === all)
      return this.page('WHERE f.parent_id = ? AND f.parent_type = ?', [o.parentId, o.parentType], o.paging, {
        heavy,
        total: readable,
      });
    // Only some: the classes the viewer reads, merged in order (readClassIndex.ts).
    if (o.paging.sort === 'lowerName' && readableClasses.length <= MAX_MERGED_CLASSES) {
      const page = readClassesPageSql(
        FOLDER_COLUMNS,
        readableClasses,
        { type: o.parentType, id: o.parentId },
        filter,
        o.paging,
      );
      const [rows] = (await this.heavy.all([{ ...page, raw: true }], heavy)) as [FolderRow[]];
      return { rows: rows.map(toDoc), total: readable };
    }
    return this.page(`WHERE ${clauses.join(' AND ')}`, args, o.paging, { heavy, total: readable });
  }

  async positionInChildren(o: PositionIn<FolderListing>): Promise<number> {
    const matching = childClauses(o);
    if (matching === null) return 0;
    return this.heavy.position(LISTED, matching.clauses, matching.args, o.paging, o.id);
  }

  async positionInSearch(o: { text: string; viewer: Viewer | null; paging: Paging; id: string }): Promise<number> {
    const query = ftsQuery(o.text);
    if (query === null) return 0;
    const readable = readableSql('f', o.viewer);
    const clauses = ['f.id IN (SELECT id FROM rm_folders_fts WHERE rm_folders_fts MATCH ?)', readable.sql];
    return this.heavy.position(LISTED, clauses, [query, ...readable.args], o.paging, o.id);
  }

  async search(o: {
    text: string;
    viewer: Viewer | null;
    level?: Level;
    paging: Paging;
  }): Promise<Page<FolderDoc & { _textScore: number }>> {
    const query = ftsQuery(o.text);
    if (query === null) return { rows: [], total: 0 };
    const readable = readableSql('f', o.viewer, o.level);
    const where = `JOIN (SELECT id AS hit_id, -bm25(rm_folders_fts, 0, 10, 1) AS score
    FROM rm_folders_fts WHERE rm_folders_fts MATCH ?) s
      ON s.hit_id = f.id WHERE ${readable.sql}`;
    const args = [query, ...readable.args];
    const page = pagingSql(o.paging, COLUMNS, 'f');
    const { rows, total } = await this.heavy.page<FolderRow>(
      {
        sql: `SELECT ${FOLDER_COLUMNS}, s.score FROM rm_folders f ${where}${page.sql}`,
        args: [...args, ...page.args],
        raw: true,
      },
      { sql: `SELECT COUNT(*) AS n FROM rm_folders f ${where}`, args },
      { heavy: true },
    );
    return { rows: rows.map((r) => ({ ...toDoc(r), _textScore: r[6] as number })), total };
  }

  async prefixSearch(o: PrefixSearch): Promise<Page<FolderDoc>> {
    const named = namePrefixSql('f', o.prefix);
    const readable = readableSql('f', o.viewer, o.level);
    return this.page(`WHERE ${named.sql} AND ${readable.sql}`, [...named.args, ...readable.args], o.paging, {
      heavy: true,
    });
  }

  async countChildren(o: { parentType: ParentType; parentId: string; viewer: Viewer | null }) {
    if (o.viewer?.admin) return this.maintainedCount(o.parentType, o.parentId);
    return readableChildCount(this.db, o.parentType, o.parentId, o.viewer).readable;
  }

  /** The parent's number of child folders as the triggers keep it (every child, whoever asks). */
  private maintainedCount(parentType: ParentType, parentId: string): number {
    const row = prepared(this.db, 'SELECT n FROM rm_folder_child_counts WHERE parent_id = ? AND parent_type = ?').get(
      parentId,
      parentType,
    ) as { n: number } | undefined;
    return row?.n ?? 0;
  }

  async childNamed(parentType: ParentType, parentId: string, name: string) {
    const row = folderRow(
      this.db,
      `${SELECT} WHERE f.parent_id = ? AND f.parent_type = ? AND f.name = ? LIMIT 1`,
      parentId,
      parentType,
      name,
    );
    return row ? toDoc(row) : null;
  }

  async siblingNamed(parentType: ParentType, parentId: string, name: string, exceptItemId?: string) {
    // One statement (one read transaction) for both tables; 'folder' sorts first, so a folder wins.
    const kind = prepared(
      this.db,
      `SELECT 'folder' AS kind FROM rm_folders WHERE parent_id = ? AND parent_type = ? AND name = ?
        UNION ALL SELECT 'item' FROM rm_items WHERE ? = 'folder' AND folder_id = ? AND name = ? AND id IS NOT ?
        ORDER BY kind LIMIT 1`,
    )
      .pluck()
      .get(parentId, parentType, name, parentType, parentId, name, exceptItemId ?? null) as
      'folder' | 'item' | undefined;
    return kind ?? null;
  }

  /** Items directly in the folder: rows of `rm_items` with that `folder_id`. */
  async itemCount(folderId: string) {
    return (prepared(this.db, 'SELECT COUNT(*) AS n FROM rm_items WHERE folder_id = ?').get(folderId) as { n: number })
      .n;
  }

  async ancestorIds(id: string) {
    return prepared(this.db, `SELECT id FROM (${ancestorsSql('?')}) ORDER BY depth DESC`)
      .pluck()
      .all(id) as string[];
  }

  async isSelfOrDescendant(folderId: string, candidateId: string) {
    if (folderId === candidateId) return true;
    return !!prepared(this.db, `SELECT 1 FROM (${ancestorsSql('?')}) WHERE id = ? LIMIT 1`).get(candidateId, folderId);
  }

  async idsUnder(
    ancestorId: string,
    filter: { lacking?: { viewer: Viewer; level: Level }; outside?: string[] } = {},
  ): Promise<string[]> {
    // Those `outside` are left out with what lies under them: the walk does not enter them.
    const outside = filter.outside?.length ? JSON.stringify(filter.outside) : null;
    ensureWalkIndex(this.db);
    const under = descendantsSql('?', outside ? { descendInto: 'c.id NOT IN (SELECT value FROM json_each(?))' } : {});
    // (Positional parameters, in the order they appear: the walk's first step and its recursive step each take the
    // list.)
    const args: unknown[] = outside ? [ancestorId, outside, outside] : [ancestorId];
    let sql = `SELECT u.id FROM (${under}) u`;
    if (filter.lacking) {
      const readable = readableSql('f', filter.lacking.viewer, filter.lacking.level);
      sql += ` JOIN rm_folders f ON f.id = u.id WHERE NOT ${readable.sql}`;
      args.push(...readable.args);
    }
    return prepared(this.db, sql)
      .pluck()
      .all(...args) as string[];
  }

  /**
   * A page and its total (`known.total` when the caller has it; counted otherwise). `known.heavy`: a read whose cost
   * grows with the matching rows, for {@link HeavyReads}.
   */
  private async page(
    where: string,
    args: unknown[],
    paging: Paging,
    known: { heavy: boolean; total?: number },
  ): Promise<Page<FolderDoc>> {
    const { rows, total } = await this.heavy.listing<FolderRow>(LISTED, where, args, paging, known);
    return { rows: rows.map(toDoc), total };
  }
}
