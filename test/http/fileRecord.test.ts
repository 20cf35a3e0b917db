import { ApiClient, binary, startApi, type TestUser } from '../support/apiClient';

/** `PUT /file/:id` and `POST /file/:id/copy` (Girder's updateFile and copy). */
describe('file records: rename, MIME type, copy', () => {
  let api: ApiClient;
  let alice: TestUser;
  let bob: TestUser;
  let privateId: string;
  let publicId: string;

  async function newItem(user: TestUser, folderId: string, name: string): Promise<string> {
    const res = await api.as(user).post('/item').query({ folderId, name });
    expect(res.status).toBe(200);
    return res.body._id;
  }
  async function upload(user: TestUser, itemId: string, name: string, text: string) {
    const bytes = Buffer.from(text);
    const res = await api
      .as(user)
      .post('/file')
      .query({ parentType: 'item', parentId: itemId, name, size: bytes.length, mimeType: 'text/plain' })
      .send(bytes);
    expect(res.status).toBe(200);
    return res.body as Record<string, any>;
  }
  const history = async (itemId: string) =>
    ((await api.as(alice).get(`/item/${itemId}/history`)).body as { type: string; data: any }[]).map((e) => ({
      type: e.type,
      data: e.data,
    }));

  beforeAll(async () => {
    api = await startApi();
    await api.createUser('admin');
    alice = await api.createUser('alice');
    bob = await api.createUser('bobby');
    const res = await api.as(alice).get(`/folder?parentType=user&parentId=${alice._id}`);
    const folders = Object.fromEntries(res.body.map((f: { name: string; _id: string }) => [f.name, f._id]));
    privateId = folders.Private;
    publicId = folders.Public;
  });
  afterAll(() => api.close());

  it('renames a file and changes its MIME type (stripped), recomputing exts, with a FileUpdated event', async () => {
    const itemId = await newItem(alice, privateId, 'doc');
    const file = await upload(alice, itemId, 'notes.txt', 'hello');
    const res = await api
      .as(alice)
      .put(`/file/${file._id}`)
      .query({ name: '  Report.Tar.GZ ', mimeType: ' application/gzip ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      _id: file._id,
      name: 'Report.Tar.GZ',
      mimeType: 'application/gzip',
      exts: ['tar', 'gz'],
    });
    expect(res.body.size).toBe(5);
    const read = await api.as(alice).get(`/file/${file._id}`);
    expect(read.body).toMatchObject({ name: 'Report.Tar.GZ', mimeType: 'application/gzip', exts: ['tar', 'gz'] });
    // Only the MIME type: the name stays.
    const mime = await api.as(alice).put(`/file/${file._id}`).query({ mimeType: 'text/csv' });
    expect(mime.body).toMatchObject({ name: 'Report.Tar.GZ', mimeType: 'text/csv' });
    const download = await api.as(alice).get(`/file/${file._id}/download`).buffer(true).parse(binary);
    expect(download.headers['content-type']).toBe('text/csv');
    expect(download.headers['content-disposition']).toBe('attachment; filename="Report.Tar.GZ"');
    expect((await history(itemId)).filter((e) => e.type === 'FileUpdated')).toEqual([
      { type: 'FileUpdated', data: { itemId, fileId: file._id, name: 'Report.Tar.GZ', mimeType: 'application/gzip' } },
      { type: 'FileUpdated', data: { itemId, fileId: file._id, mimeType: 'text/csv' } },
    ]);
  });

  it("refuses an empty name with Girder's message, and control characters in the MIME type", async () => {
    const itemId = await newItem(alice, privateId, 'refusals');
    const file = await upload(alice, itemId, 'a.txt', 'a');
    const empty = await api.as(alice).put(`/file/${file._id}`).query({ name: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ message: 'File name must not be empty.', type: 'validation', field: 'name' });
    const control = await api.as(alice).put(`/file/${file._id}`).query({ mimeType: 'text/plain\u0007' });
    expect(control.status).toBe(400);
    expect(control.body).toEqual({
      message: 'Invalid value for mimeType: control characters are not allowed.',
      type: 'rest',
    });
    expect((await api.as(alice).get(`/file/${file._id}`)).body).toMatchObject({
      name: 'a.txt',
      mimeType: 'text/plain',
    });
  });

  it('needs WRITE on the file for a change; a missing file is an invalid id', async () => {
    const itemId = await newItem(alice, publicId, 'shared');
    const file = await upload(alice, itemId, 'p.txt', 'p');
    const denied = await api.as(bob).put(`/file/${file._id}`).query({ name: 'x' });
    expect(denied.status).toBe(403);
    expect(denied.body.type).toBe('access');
    const anonymous = await api.as(null).put(`/file/${file._id}`).query({ name: 'x' });
    expect(anonymous.status).toBe(401);
    const missing = await api.as(alice).put('/file/000000000000000000000000').query({ name: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: 'Invalid file id (000000000000000000000000).', type: 'rest' });
    expect((await api.as(alice).get(`/file/${file._id}`)).body.name).toBe('p.txt');
  });

  it('copies a file into another item sharing its bytes: the sizes grow, the source records FileCopied', async () => {
    const sourceItem = await newItem(alice, privateId, 'source');
    const targetItem = await newItem(alice, privateId, 'target');
    const file = await upload(alice, sourceItem, 'data.bin', 'twelve bytes');
    const res = await api.as(alice).post(`/file/${file._id}/copy`).query({ itemId: targetItem });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      _modelType: 'file',
      itemId: targetItem,
      name: 'data.bin',
      size: 12,
      mimeType: 'text/plain',
      creatorId: alice._id,
      created: file.created,
      exts: ['bin'],
    });
    expect(res.body._id).not.toBe(file._id);
    // Girder's copyFile: the source's record plus who copied it, when (not shown to readers: the events carry it).
    const [created] = (await history(targetItem)).filter((e) => e.type === 'FileCreated');
    expect(created.data).toMatchObject({ fileId: res.body._id, copyOfFile: file._id, copierId: alice._id });
    expect(typeof created.data.copied).toBe('string');
    const bytes = await api.as(alice).get(`/file/${res.body._id}/download`).buffer(true).parse(binary);
    expect(bytes.body.toString()).toBe('twelve bytes');
    expect((await api.as(alice).get(`/item/${targetItem}`)).body.size).toBe(12);
    expect((await api.as(alice).get(`/item/${sourceItem}`)).body.size).toBe(12);
    expect((await history(sourceItem)).filter((e) => e.type === 'FileCopied')).toEqual([
      {
        type: 'FileCopied',
        data: { itemId: sourceItem, fileId: file._id, copyFileId: res.body._id, toItemId: targetItem },
      },
    ]);
    // Deleting the source keeps the copy's bytes (they are shared, not reclaimed).
    expect((await api.as(alice).delete(`/file/${file._id}`)).status).toBe(200);
    const after = await api.as(alice).get(`/file/${res.body._id}/download`).buffer(true).parse(binary);
    expect(after.body.toString()).toBe('twelve bytes');
  });

  it('copies a file into its own item', async () => {
    const itemId = await newItem(alice, privateId, 'self');
    const file = await upload(alice, itemId, 'twice.txt', 'abc');
    const res = await api.as(alice).post(`/file/${file._id}/copy`).query({ itemId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ itemId, name: 'twice.txt', size: 3 });
    const files = await api.as(alice).get(`/item/${itemId}/files`);
    expect(files.body.map((f: { name: string }) => f.name)).toEqual(['twice.txt', 'twice.txt']);
    expect((await api.as(alice).get(`/item/${itemId}`)).body.size).toBe(6);
  });

  it('needs READ on the file and WRITE on the destination item; itemId is required', async () => {
    const shared = await newItem(alice, publicId, 'readable');
    const file = await upload(alice, shared, 'r.txt', 'r');
    const bobFolders = await api.as(bob).get(`/folder?parentType=user&parentId=${bob._id}`);
    const bobPrivate = bobFolders.body.find((f: { name: string }) => f.name === 'Private')._id;
    const bobItem = await newItem(bob, bobPrivate, 'mine');
    // READ on alice's public file is enough to copy it into bob's own item.
    const ok = await api.as(bob).post(`/file/${file._id}/copy`).query({ itemId: bobItem });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ itemId: bobItem, creatorId: alice._id });
    // No WRITE on alice's item.
    const denied = await api.as(bob).post(`/file/${file._id}/copy`).query({ itemId: shared });
    expect(denied.status).toBe(403);
    expect(denied.body.type).toBe('access');
    const noItem = await api.as(alice).post(`/file/${file._id}/copy`);
    expect(noItem.status).toBe(400);
    expect(noItem.body).toEqual({ message: "Parameter 'itemId' is required.", type: 'rest' });
    const badItem = await api.as(alice).post(`/file/${file._id}/copy`).query({ itemId: '000000000000000000000000' });
    expect(badItem.status).toBe(400);
    expect(badItem.body).toEqual({ message: 'Invalid item id (000000000000000000000000).', type: 'rest' });
    expect((await api.as(alice).get(`/item/${shared}/files`)).body).toHaveLength(1);
  });
});
