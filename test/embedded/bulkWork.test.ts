import { SqliteBulkApply } from '../../src/infra/readmodel/sqlite/bulkApply';
import { PROJECTOR_LEASE } from '../../src/projections/projector';
import type { RecordedEvent } from '../../src/ports/eventStore';
import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';

/**
 * Large subtree operations on the embedded read model run in a worker thread (docs/subtree-operations.md, "Off the
 * event loop"). Through the HTTP API: the service answers other requests while the worker applies a copy, the
 * projector lease survives an operation that lasts longer than its time to live, and every kind of subtree event
 * gives through the worker the result the API documents. (Crash safety of the worker path: subtreeCrash.test.ts,
 * whose trees are above the threshold.)
 */

jest.setTimeout(120_000);

let api: ApiClient;
let admin: TestUser;

/** Every call to the worker: the event type, and what happened while it ran. */
interface BackgroundCall {
  type: string;
  /** A GET /folder/:id and a GET /readyz sent right after the event went to the worker, if they answered before it
   * finished. */
  answeredMeanwhile?: { folder: number; readyz: number; lease: unknown };
}
let calls: BackgroundCall[];
let probeFolderId: string | null;

function spyOnWorker(): void {
  const original = SqliteBulkApply.prototype.apply;
  jest.spyOn(SqliteBulkApply.prototype, 'apply').mockImplementation(function (
    this: SqliteBulkApply,
    checkpoint,
    event: RecordedEvent,
    lease,
  ) {
    const call: BackgroundCall = { type: event.type };
    calls.push(call);
    const applying = original.call(this, checkpoint, event, lease);
    if (probeFolderId) {
      let done = false;
      void applying.finally(() => (done = true)).catch(() => undefined);
      void Promise.all([api.as(admin).get(`/folder/${probeFolderId}`), api.site().get('/readyz')]).then(
        ([folder, readyz]) => {
          if (!done)
            call.answeredMeanwhile = {
              folder: folder.status,
              readyz: readyz.status,
              lease: readyz.body.checks?.projector?.lease,
            };
        },
      );
    }
    return applying;
  });
}

afterEach(async () => {
  jest.restoreAllMocks();
  await api?.close();
});

describe('a large copy, applied by the worker', () => {
  beforeEach(async () => {
    calls = [];
    probeFolderId = null;
    spyOnWorker();
    // A lease that lives 1 s: applied on the event loop, a copy of this size (seconds) outlasted it and lost the lease.
    api = await startApi({ PROJECTOR_LEASE_TTL_MS: '1000' });
    admin = await api.createUser('admin');
  });

  it('leaves the service answering meanwhile and keeps the projector lease', async () => {
    const publicId = await api.defaultFolder(admin, 'Public');
    const tree = await api.buildTree(admin, await api.defaultFolder(admin, 'Private'), 10, 10); // 11,264 folders
    probeFolderId = publicId;
    calls = [];

    const copy = ok(
      await api.as(admin).post(`/folder/${tree.id}/copy`).query({ parentType: 'folder', parentId: publicId }),
    );

    expect(calls).toEqual([{ type: 'FolderCopied', answeredMeanwhile: { folder: 200, readyz: 200, lease: 'held' } }]);
    const details = ok(await api.as(admin).get(`/folder/${copy._id}/details`));
    expect(details).toEqual({ nFolders: 20, nItems: 0 }); // the 10 nodes and the 10 copies made while doubling
    const { projector, readModel } = api.runtime.services;
    expect(projector.role).toBe('holder');
    expect(projector.failed).toBeNull();
    expect((await readModel.leases.get(PROJECTOR_LEASE))?.holder).toBe(projector.holderId);
    expect((await api.site().get('/readyz')).status).toBe(200);
  });
});

describe('every subtree event through the worker (BULK_WORKER_MIN_FOLDERS=1)', () => {
  beforeEach(async () => {
    calls = [];
    probeFolderId = null;
    spyOnWorker();
    api = await startApi({ BULK_WORKER_MIN_FOLDERS: '1' });
    admin = await api.createUser('admin');
  });

  it('copies, re-permissions, empties and deletes as documented', async () => {
    const other = await api.createUser('other');
    const privateId = await api.defaultFolder(admin, 'Private');
    const source = ok(
      await api.as(admin).post('/folder').query({ parentType: 'folder', parentId: privateId, name: 'source' }),
    );
    const child = ok(
      await api.as(admin).post('/folder').query({ parentType: 'folder', parentId: source._id, name: 'child' }),
    );
    const item = await api.newItem(admin, child._id, 'report');
    await api.addFile(admin, item, 'twelve bytes');

    const copy = ok(
      await api
        .as(admin)
        .post(`/folder/${source._id}/copy`)
        .query({ parentType: 'folder', parentId: privateId, name: 'copy' }),
    );
    const copiedChildren = ok(await api.as(admin).get('/folder').query({ parentType: 'folder', parentId: copy._id }));
    expect(copiedChildren.map((f: { name: string; size: number }) => [f.name, f.size])).toEqual([['child', 12]]);
    const copiedItems = ok(await api.as(admin).get('/item').query({ folderId: copiedChildren[0]._id }));
    expect(copiedItems.map((i: { name: string; size: number }) => [i.name, i.size])).toEqual([['report', 12]]);

    const access = JSON.stringify({
      users: [
        { id: admin._id, level: 2 },
        { id: other._id, level: 0 },
      ],
      groups: [],
    });
    ok(await api.as(admin).put(`/folder/${copy._id}/access`).query({ access, recurse: 'true' }));
    const readByOther = await api.as(other).get(`/folder/${copiedChildren[0]._id}`);
    expect(readByOther.status).toBe(200);
    expect(readByOther.body.name).toBe('child');

    ok(await api.as(admin).delete(`/folder/${copy._id}/contents`));
    expect(ok(await api.as(admin).get(`/folder/${copy._id}/details`))).toEqual({ nFolders: 0, nItems: 0 });
    expect((await api.as(admin).get(`/folder/${copiedChildren[0]._id}`)).body).toEqual({
      message: `Invalid folder id (${copiedChildren[0]._id}).`,
      type: 'rest',
    });

    ok(await api.as(admin).delete(`/folder/${source._id}`));
    const gone = await api.as(admin).get(`/folder/${child._id}`);
    expect(gone.status).toBe(400);
    expect(gone.body).toEqual({ message: `Invalid folder id (${child._id}).`, type: 'rest' });

    const collection = ok(await api.as(admin).post('/collection').query({ name: 'doomed' }));
    const inCollection = ok(
      await api.as(admin).post('/folder').query({ parentType: 'collection', parentId: collection._id, name: 'inside' }),
    );
    ok(await api.as(admin).delete(`/collection/${collection._id}`));
    expect((await api.as(admin).get(`/folder/${inCollection._id}`)).status).toBe(400);

    expect(calls.map((c) => c.type)).toEqual([
      'FolderCopied',
      'FolderAccessChanged',
      'FolderContentsCleared',
      'FolderDeleted',
      'CollectionDeleted',
    ]);
  });
});
