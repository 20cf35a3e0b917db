import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';

/**
 * `PUT /file/:id/move` (Girder's moveFileToAssetstore, site administrators): the bytes are copied into the other
 * store, the file points there (a `FileMoved` event), and the old bytes are released under the retention rules.
 */
describe('PUT /file/:id/move', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let scratch: string;
  let folderId: string;
  let otherStore: string;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'file-move-'));
    folderId = await api.defaultFolder(alice, 'Private');
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query({ name: 'other', type: 0, root: path.join(scratch, 'other') });
    expect(created.status).toBe(200);
    otherStore = created.body._id;
  });
  afterAll(async () => {
    await api?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const upload = async (name: string, bytes: Buffer, parentId = folderId) => {
    const res = await api
      .as(alice)
      .post('/file')
      .query({ parentType: 'folder', parentId, name, size: bytes.length })
      .send(bytes);
    expect(res.status).toBe(200);
    return res.body as { _id: string; itemId: string; sha512: string };
  };
  const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
  /** Where the default store keeps a blob (content-addressed under DATA_DIR/blobs). */
  const defaultBlob = (bytes: Buffer) =>
    path.join(api.server.dataDir, 'blobs', sha256(bytes).slice(0, 2), sha256(bytes));
  const namesIn = async (assetstoreId: string) =>
    ((await api.as(admin).get(`/assetstore/${assetstoreId}/files`)).body as { name: string }[]).map((f) => f.name);

  it('is for site administrators, with a destination that exists', async () => {
    const file = await upload('guarded.txt', Buffer.from('guarded'));
    const refused = await api.as(alice).put(`/file/${file._id}/move`).query({ assetstoreId: otherStore });
    expect([refused.status, refused.body]).toEqual([
      403,
      { message: 'Administrator access required.', type: 'access' },
    ]);
    const missing = await api
      .as(admin)
      .put(`/file/${file._id}/move`)
      .query({ assetstoreId: 'f'.repeat(24) });
    expect([missing.status, missing.body]).toEqual([
      400,
      { message: `Invalid assetstore id (${'f'.repeat(24)}).`, type: 'rest' },
    ]);
    const noStore = await api.as(admin).put(`/file/${file._id}/move`);
    expect([noStore.status, noStore.body]).toEqual([
      400,
      { message: "Parameter 'assetstoreId' is required.", type: 'rest' },
    ]);
    const noFile = await api
      .as(admin)
      .put(`/file/${'e'.repeat(24)}/move`)
      .query({ assetstoreId: otherStore });
    expect([noFile.status, noFile.body]).toEqual([
      400,
      { message: `Invalid file id (${'e'.repeat(24)}).`, type: 'rest' },
    ]);
  });

  it('copies the bytes into the other store, answers the file and removes the old bytes', async () => {
    const bytes = crypto.randomBytes(70_000);
    const file = await upload('moved.bin', bytes);
    expect(fs.existsSync(defaultBlob(bytes))).toBe(true);
    const res = await api.as(admin).put(`/file/${file._id}/move`).query({ assetstoreId: otherStore, progress: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual((await api.as(admin).get(`/file/${file._id}`)).body);
    // A site administrator sees which store now holds it (Girder's file filter).
    expect(res.body).toMatchObject({
      _id: file._id,
      size: bytes.length,
      sha512: file.sha512,
      assetstoreId: otherStore,
    });
    expect(await namesIn(otherStore)).toContain('moved.bin');
    expect(await namesIn('000000000000000000000001')).not.toContain('moved.bin');
    expect((await api.download(alice, file._id)).body.equals(bytes)).toBe(true);
    expect(fs.existsSync(path.join(scratch, 'other', sha256(bytes).slice(0, 2), sha256(bytes)))).toBe(true);
    // Nothing else referenced the old bytes: they are gone.
    expect(fs.existsSync(defaultBlob(bytes))).toBe(false);
    // The item's history records the move.
    const history = await api.as(alice).get(`/item/${file.itemId}/history`);
    expect((history.body as { type: string }[]).map((e) => e.type)).toContain('FileMoved');
    // Moving it where it is changes nothing.
    const again = await api.as(admin).put(`/file/${file._id}/move`).query({ assetstoreId: otherStore });
    expect([again.status, again.body]).toEqual([200, res.body]);
    // And back: an empty store keeps working too.
    const back = await api.as(admin).put(`/file/${file._id}/move`).query({ assetstoreId: '000000000000000000000001' });
    expect(back.status).toBe(200);
    expect(await namesIn(otherStore)).not.toContain('moved.bin');
    expect((await api.download(alice, file._id)).body.equals(bytes)).toBe(true);
  });

  it('keeps old bytes that a folder removed within the retention window still references', async () => {
    const bytes = crypto.randomBytes(5000);
    const file = await upload('kept.bin', bytes);
    const removed = await api
      .as(alice)
      .post('/folder')
      .query({ parentType: 'folder', parentId: folderId, name: 'gone' });
    const copy = await api.as(alice).post(`/item/${file.itemId}/copy`).query({ folderId: removed.body._id });
    expect(copy.status).toBe(200);
    expect((await api.as(alice).delete(`/folder/${removed.body._id}`)).status).toBe(200);
    const res = await api.as(admin).put(`/file/${file._id}/move`).query({ assetstoreId: otherStore });
    expect(res.status).toBe(200);
    // The removed folder may still be restored: its copy's bytes stay.
    expect(fs.existsSync(defaultBlob(bytes))).toBe(true);
  });

  it('moves an empty file', async () => {
    const empty = await api
      .as(alice)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name: 'empty.txt', size: 0 });
    const res = await api.as(admin).put(`/file/${empty.body._id}/move`).query({ assetstoreId: otherStore });
    expect([res.status, res.body.size]).toEqual([200, 0]);
    expect(await namesIn(otherStore)).toContain('empty.txt');
    expect((await api.download(alice, empty.body._id)).body).toEqual(Buffer.alloc(0));
  });
});
