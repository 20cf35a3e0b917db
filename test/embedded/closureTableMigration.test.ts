import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ok, startApi, type ApiClient } from '../support/apiClient';

/**
 * Files written before the folder tree was read from the parent links alone (src/infra/readmodel/sqlite/folderTree.ts)
 * held the ancestry in a closure table, `rm_folder_ancestors`. Such a file opens: the table is dropped, and the tree,
 * its paths, moves and subtree deletes work from the folders' rows.
 */

jest.setTimeout(60_000);

let dataDir: string;
let api: ApiClient | undefined;

afterEach(async () => {
  await api?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('drops the closure table of an older file and serves the tree from the parent links', async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-closure-'));
  api = await startApi({}, { dataDir });
  const alice = await api.createUser('alice');
  const a = await api.createFolder(alice, 'user', alice._id, 'a');
  const b = await api.createFolder(alice, 'folder', a, 'b');
  const c = await api.createFolder(alice, 'folder', b, 'c');
  const elsewhere = await api.createFolder(alice, 'user', alice._id, 'elsewhere');
  await api.close();
  api = undefined;

  // The file as the former release left it: the closure rows of a, b and c.
  const file = new Database(path.join(dataDir, 'folder-service.sqlite'));
  file.exec(`CREATE TABLE rm_folder_ancestors (folder_id TEXT NOT NULL, ancestor_id TEXT NOT NULL, depth INTEGER NOT NULL,
    PRIMARY KEY (ancestor_id, folder_id)) WITHOUT ROWID`);
  const row = file.prepare('INSERT INTO rm_folder_ancestors (folder_id, ancestor_id, depth) VALUES (?, ?, ?)');
  row.run(b, a, 1);
  row.run(c, b, 1);
  row.run(c, a, 2);
  file.close();

  api = await startApi({}, { dataDir });
  const tables = () => {
    const db = new Database(path.join(dataDir, 'folder-service.sqlite'), { readonly: true });
    try {
      return db.prepare("SELECT name FROM sqlite_master WHERE name = 'rm_folder_ancestors'").all();
    } finally {
      db.close();
    }
  };
  expect(tables()).toEqual([]);
  const rootpath = async (id: string) =>
    ok<{ type: string; object: { _id: string } }[]>(await api!.as(alice).get(`/folder/${id}/rootpath`)).map(
      (entry) => `${entry.type}:${entry.object._id}`,
    );
  expect(await rootpath(c)).toEqual([`user:${alice._id}`, `folder:${a}`, `folder:${b}`]);

  // A move of b under another folder: c's path follows.
  expect((await api.as(alice).put(`/folder/${b}`).query({ parentType: 'folder', parentId: elsewhere })).status).toBe(
    200,
  );
  expect(await rootpath(c)).toEqual([`user:${alice._id}`, `folder:${elsewhere}`, `folder:${b}`]);

  // A subtree delete takes the folder and everything under it.
  expect((await api.as(alice).delete(`/folder/${elsewhere}`)).status).toBe(200);
  for (const id of [elsewhere, b, c]) {
    const res = await api.as(alice).get(`/folder/${id}`);
    expect([res.status, res.body.message]).toEqual([400, `Invalid folder id (${id}).`]);
  }
  expect((await api.as(alice).get(`/folder/${a}`)).status).toBe(200);
});
