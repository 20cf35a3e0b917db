import { OffLoopReads } from '../../src/infra/sqlite/offLoopReads';
import type { SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import type { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import { pagingOf } from '../../src/http/params';
import { openReadModelFile, type ReadModelFile } from '../support/readModelFile';

/**
 * Reads that scan run on a reader thread (src/infra/sqlite/offLoopReads.ts) once the live service moves them there
 * (SqliteReadModel.readHeavyOffLoop): what the thread answers, that the event loop runs meanwhile, and which listings
 * go there.
 */

let scratch: ReadModelFile;
let db: SqliteDatabase;
let reads: OffLoopReads;

beforeEach(() => {
  scratch = openReadModelFile('off-loop-reads');
  db = scratch.db;
  db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)');
  reads = new OffLoopReads(scratch.file);
});
afterEach(async () => {
  await reads.close();
  await scratch.remove();
});

const countToThreeMillion =
  'WITH RECURSIVE c (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT COUNT(*) AS n FROM c';

it("answers each statement's rows, bound values included, and sees what another connection committed", async () => {
  expect(
    await reads.read([
      { sql: 'SELECT n FROM t WHERE n >= ? ORDER BY n', args: [2] },
      { sql: 'SELECT COUNT(*) AS total FROM t', args: [] },
    ]),
  ).toEqual([[{ n: 2 }, { n: 3 }], [{ total: 3 }]]);
  db.exec('INSERT INTO t VALUES (4)');
  expect(await reads.read([{ sql: 'SELECT MAX(n) AS n FROM t', args: [] }])).toEqual([[{ n: 4 }]]);
});

it('keeps the event loop running while a long read runs on the thread', async () => {
  const settled: string[] = [];
  const long = reads.read([{ sql: countToThreeMillion, args: [] }]).then((rows) => {
    settled.push('read');
    return rows;
  });
  await new Promise((resolve) => setTimeout(resolve, 1));
  settled.push('timer');
  expect(await long).toEqual([[{ n: 3_000_000 }]]);
  expect(settled).toEqual(['timer', 'read']);
});

it("fails a read with SQLite's error, refuses writes, and goes on answering", async () => {
  await expect(reads.read([{ sql: 'SELECT * FROM missing', args: [] }])).rejects.toMatchObject({
    message: 'no such table: missing',
    code: 'SQLITE_ERROR',
  });
  await expect(reads.read([{ sql: 'INSERT INTO t VALUES (5) RETURNING n', args: [] }])).rejects.toMatchObject({
    code: 'SQLITE_READONLY',
  });
  expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(3);
  expect(await reads.read([{ sql: 'SELECT COUNT(*) AS n FROM t', args: [] }])).toEqual([[{ n: 3 }]]);
});

it('fails the reads in flight when stopped, and starts a new thread for the next read', async () => {
  const inFlight = expect(reads.read([{ sql: countToThreeMillion, args: [] }])).rejects.toThrow(
    'the reader thread was stopped',
  );
  await reads.close();
  await inFlight;
  expect(await reads.read([{ sql: 'SELECT COUNT(*) AS n FROM t', args: [] }])).toEqual([[{ n: 3 }]]);
});

describe('the read models send there the listings no index serves', () => {
  let readModel: SqliteReadModel;
  let sent: string[];

  beforeEach(() => {
    readModel = scratch.readModel;
    readModel.readHeavyOffLoop(reads);
    sent = [];
    const read = reads.read.bind(reads);
    jest.spyOn(reads, 'read').mockImplementation((statements) => {
      sent.push(...statements.map((statement) => statement.sql));
      return read(statements);
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const admin = { id: 'admin', groups: [], admin: true };
  const listFolders = (sort: string, o: { name?: string; text?: string; offset?: number } = {}) =>
    readModel.folders.listChildren({
      parentType: 'user',
      parentId: 'u1',
      viewer: admin,
      paging: pagingOf({ sort, limit: 10, offset: o.offset ?? 0 }),
      ...(o.name !== undefined ? { name: o.name } : {}),
      ...(o.text !== undefined ? { text: o.text } : {}),
    });
  const listItems = (sort: string, o: { name?: string; text?: string; offset?: number } = {}) =>
    readModel.items.listInFolder({
      folderId: 'f1',
      paging: pagingOf({ sort, limit: 10, offset: o.offset ?? 0 }),
      ...(o.name !== undefined ? { name: o.name } : {}),
      ...(o.text !== undefined ? { text: o.text } : {}),
    });

  it('keeps the sorts an index serves, and exact names, on the connection', async () => {
    for (const sort of ['lowerName', 'name']) {
      expect(await listFolders(sort, { offset: 49_999 })).toEqual({ rows: [], total: 0 });
      expect(await listItems(sort, { offset: 49_999 })).toEqual({ rows: [], total: 0 });
    }
    expect(await listFolders('created', { name: 'a' })).toEqual({ rows: [], total: 0 });
    expect(await listItems('created', { name: 'a' })).toEqual({ rows: [], total: 0 });
    expect(sent).toEqual([]);
  });

  it('sends other sorts, deep offsets, text filters and searches to the reader thread', async () => {
    expect(await listFolders('created')).toEqual({ rows: [], total: 0 });
    expect(await listFolders('lowerName', { offset: 50_000 })).toEqual({ rows: [], total: 0 });
    expect(await listItems('name', { offset: 50_000 })).toEqual({ rows: [], total: 0 });
    expect(await listFolders('meta.x')).toEqual({ rows: [], total: 0 });
    expect(await listFolders('lowerName', { text: 'word' })).toEqual({ rows: [], total: 0 });
    expect(await readModel.folders.search({ text: 'word', viewer: admin, paging: pagingOf({}) })).toEqual({
      rows: [],
      total: 0,
    });
    expect(await listItems('updated')).toEqual({ rows: [], total: 0 });
    expect(await listItems('lowerName', { text: 'word' })).toEqual({ rows: [], total: 0 });
    expect(await readModel.items.search({ text: 'word', viewer: admin, paging: pagingOf({}) })).toEqual({
      rows: [],
      total: 0,
    });
    const pages = sent.filter((sql) => !sql.startsWith('SELECT COUNT(*)'));
    expect(pages).toHaveLength(9);
    expect(pages[0]).toContain('ORDER BY f.created ASC, f.id ASC');
  });
});
