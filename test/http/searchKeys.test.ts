import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { dropSearchKeys } from '../support/oldSchema';
import { mongoStandInMode } from '../../src/infra/readmodel/createReadModel';
import { loadConfig } from '../../src/config';
import { verifyReadModels } from '../../src/cli/verify';
import { rebuildReadModels } from '../../src/cli/rebuild';

/**
 * The embedded read model finds a folder's, an item's or a collection's search row through a key the row stores
 * (src/infra/readmodel/sqlite/searchRows.ts): text search follows renames and deletes after a VACUUM, and a DATA_DIR
 * written before the keys existed is migrated on start, then keeps search right, equal to a replay of the log and
 * to a rebuild. Embedded only: the MongoDB adapter keeps its text index inside the documents.
 */
const describeEmbedded = mongoStandInMode() !== null ? describe.skip : describe;

function capture() {
  const chunks: string[] = [];
  const out = { isTTY: false, write: (chunk: string) => chunks.push(chunk) > 0 } as unknown as NodeJS.WriteStream;
  return { out, text: () => chunks.join('') };
}

/** The schema before the keys (test/support/oldSchema.ts), on the service's file. */
function downgrade(file: string): void {
  const db = new Database(file);
  try {
    dropSearchKeys(db, 1001);
  } finally {
    db.close();
  }
}

describeEmbedded('search rows of the embedded read model', () => {
  let dataDir: string;
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  const config = () => loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir });

  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'search-keys-'));
    api = await startApi({}, { dataDir });
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
  });
  afterEach(async () => {
    await api?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const names = (body: { name: string }[]) => body.map((row) => row.name).sort();
  const found = async (text: string) => ({
    folders: names((await api.as(alice).get('/folder').query({ text })).body),
    items: names((await api.as(alice).get('/item').query({ text })).body),
    collections: names((await api.as(admin).get('/collection').query({ text })).body),
  });
  const none = { folders: [], items: [], collections: [] };
  const rename = async (kind: 'folder' | 'item' | 'collection', id: string, name: string) =>
    ok(
      await api
        .as(kind === 'collection' ? admin : alice)
        .put(`/${kind}/${id}`)
        .query({ name }),
      `rename ${kind}`,
    );

  /** Public ─ Lynx, renamed Bobcat ("forest cat") ─ Otter ─ item Heron; collection Wetlands. */
  async function content() {
    const publicId = await api.defaultFolder(alice, 'Public');
    const bobcat = await api.subfolder(alice, publicId, 'Lynx', { description: 'forest cat' });
    await rename('folder', bobcat, 'Bobcat');
    const otter = await api.subfolder(alice, bobcat, 'Otter');
    const heron = await api.newItem(alice, otter, 'Heron');
    const wetlands = ok(await api.as(admin).post('/collection').type('form').send({ name: 'Wetlands' }))._id as string;
    return { publicId, bobcat, otter, heron, wetlands };
  }

  it('follows renames and deletes after a VACUUM', async () => {
    const x = await content();
    api.runtime.db.exec('VACUUM');
    await rename('folder', x.otter, 'Beaver');
    await rename('item', x.heron, 'Egret');
    await rename('collection', x.wetlands, 'Marshes');
    await api.subfolder(alice, x.publicId, 'Newt');
    expect(await found('otter heron wetlands lynx')).toEqual(none);
    expect(await found('beaver egret marshes bobcat newt')).toEqual({
      folders: ['Beaver', 'Bobcat', 'Newt'],
      items: ['Egret'],
      collections: ['Marshes'],
    });
    ok(await api.as(alice).delete(`/folder/${x.bobcat}`), 'delete');
    expect(await found('beaver egret bobcat forest')).toEqual(none);
    expect((await found('newt')).folders).toEqual(['Newt']);
  });

  it('migrates a DATA_DIR written before the keys, and search keeps following the writes', async () => {
    const x = await content();
    await api.close();
    downgrade(path.join(dataDir, 'folder-service.sqlite'));
    api = await startApi({}, { dataDir });
    for (const table of ['rm_folders', 'rm_items', 'rm_collections'])
      expect(api.runtime.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table)).toContain(
        'search_rowid',
      );
    expect(await found('lynx')).toEqual(none);
    expect(await found('bobcat otter heron wetlands')).toEqual({
      folders: ['Bobcat', 'Otter'],
      items: ['Heron'],
      collections: ['Wetlands'],
    });

    await rename('folder', x.bobcat, 'Cougar');
    await rename('item', x.heron, 'Egret');
    await rename('collection', x.wetlands, 'Marshes');
    ok(await api.as(alice).delete(`/folder/${x.otter}`), 'delete');
    await api.subfolder(alice, x.publicId, 'Newt');
    const expected = { folders: ['Cougar', 'Newt'], items: [], collections: ['Marshes'] };
    expect(await found('bobcat otter heron wetlands egret')).toEqual(none);
    expect(await found('cougar forest newt marshes')).toEqual(expected);

    // Equal to a replay of the log (verify), and to a rebuild.
    const verified = capture();
    expect(await verifyReadModels(config(), [], verified.out)).toBe(0);
    expect(verified.text()).toContain('The read models match the event log.');
    await api.close();
    await rebuildReadModels(config(), [], capture().out);
    api = await startApi({}, { dataDir });
    expect(await found('bobcat otter heron wetlands egret')).toEqual(none);
    expect(await found('cougar forest newt marshes')).toEqual(expected);
    await rename('folder', x.bobcat, 'Puma');
    expect(await found('cougar puma')).toEqual({ folders: ['Puma'], items: [], collections: [] });
  });
});
