import { openDatabase, type SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import {
  READ_CLASS_SORT_INDEX,
  readClassHash,
  readClassesPageSql,
} from '../../src/infra/readmodel/sqlite/readClassIndex';
import { readableSql } from '../../src/infra/readmodel/sqlite/sqlHelpers';
import { pagingOf } from '../../src/http/params';

/**
 * The embedded read model's listing for a viewer who reads only part of a parent's children (readClassIndex.ts):
 * how SQLite runs it, and the hash the index and the application share.
 */

let db: SqliteDatabase;
let readModel: SqliteReadModel;

beforeEach(() => {
  db = openDatabase(':memory:');
  readModel = new SqliteReadModel(db);
});
afterEach(async () => {
  await readModel.dispose();
  db.close();
});

const viewer = { id: 'u1', groups: ['g1'], admin: false };
const classes = ['public', '{"users":[{"id":"u1","level":0,"flags":[]}],"groups":[]}', '{"users":[],"groups":[]}'];

it('merges one index range per read class in order, without a sort and without walking other classes', () => {
  for (const sortdir of [1, -1] as const) {
    const page = readClassesPageSql(
      'f.id, f.doc',
      classes,
      { type: 'folder', id: 'p' },
      readableSql('f', viewer),
      pagingOf({ limit: 50, offset: 100, sortdir }),
    );
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${page.sql}`).all(...page.args) as { detail: string }[]).map(
      (row) => row.detail,
    );
    expect(plan.filter((detail) => detail.startsWith('MERGE (UNION ALL)'))).toHaveLength(classes.length - 1);
    const folderSteps = plan.filter((detail) => /^(SCAN|SEARCH) f\b/.test(detail));
    expect(folderSteps).toEqual(
      classes.map(() => `SEARCH f USING INDEX ${READ_CLASS_SORT_INDEX} (parent_id=? AND parent_type=? AND <expr>=?)`),
    );
    expect(plan.some((detail) => detail.includes('TEMP B-TREE'))).toBe(false);
  }
});

it('keys a class in SQL exactly as the application does', () => {
  for (const readClass of classes)
    expect(db.prepare('SELECT rm_read_class_hash(?)').pluck().get(readClass)).toBe(readClassHash(readClass));
  expect(db.prepare('SELECT rm_read_class_hash(NULL)').pluck().get()).toBeNull();
});
