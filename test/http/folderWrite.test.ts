import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { issueToken } from '../../src/commands/userCommands';
import { systemMeta } from '../../src/commands/requestMeta';
import { toNewEvents } from '../../src/commands/streamHandle';
import { itemStream } from '../../src/domain/item';
import { folderStream } from '../../src/domain/folder';
import type { FolderDoc } from '../../src/ports/readModel';
import { rebuild } from '../../src/projections/rebuild';
import { Scope } from '../../src/domain/scopes';

/** POST /folder, PUT /folder/:id (rename, metadata, move), PUT/DELETE /folder/:id/metadata, PUT /folder/:id/access. */

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let alicePublic: string;
let alicePrivate: string;
let adminPrivate: string;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/;
const OBJECT_ID = /^[0-9a-f]{24}$/;
let counter = 0;
const unique = (prefix = 'folder') => `${prefix} ${++counter}`;

function post(form: Record<string, string>, token: string | null) {
  return api.as(token).post('/folder').type('form').send(form);
}
function put(id: string, form: Record<string, string>, token: string | null) {
  return api.as(token).put(`/folder/${id}`).type('form').send(form);
}
function putMetadata(id: string, body: string, token: string | null, query: Record<string, string> = {}) {
  return api.as(token).put(`/folder/${id}/metadata`).query(query).set('Content-Type', 'application/json').send(body);
}
function deleteMetadata(id: string, body: string, token: string | null) {
  return api.as(token).delete(`/folder/${id}/metadata`).set('Content-Type', 'application/json').send(body);
}
function putAccess(id: string, form: Record<string, string>, token: string | null) {
  return api.as(token).put(`/folder/${id}/access`).type('form').send(form);
}

async function folder(id: string): Promise<FolderDoc> {
  const doc = await api.runtime.services.readModel.folders.get(id);
  if (!doc) throw new Error(`folder ${id} is not in the read model`);
  return doc;
}

async function create(parentId: string, token: string, extra: Record<string, string> = {}): Promise<string> {
  const res = await post({ parentId, name: unique(), ...extra }, token);
  if (res.status !== 200) throw new Error(`POST /folder: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body._id;
}

async function childNamed(parentId: string, name: string): Promise<FolderDoc[]> {
  const page = await api.runtime.services.readModel.folders.listChildren({
    parentType: 'folder',
    parentId,
    viewer: { id: admin._id, admin: true, groups: [] },
    name,
    paging: { limit: 0, offset: 0, sort: 'lowerName', sortdir: 1 },
  });
  return page.rows;
}

async function scopedToken(user: TestUser, scope: string[]): Promise<string> {
  return (
    await issueToken(
      api.runtime.services.commands,
      { userId: user._id, scope, days: 1 },
      systemMeta('test-scoped-token'),
    )
  ).token;
}

async function defaultFolder(user: TestUser, name: 'Public' | 'Private'): Promise<string> {
  const page = await api.runtime.services.readModel.folders.listChildren({
    parentType: 'user',
    parentId: user._id,
    viewer: { id: user._id, admin: false, groups: [] },
    name,
    paging: { limit: 1, offset: 0, sort: 'lowerName', sortdir: 1 },
  });
  return page.rows[0]._id;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  alicePublic = await defaultFolder(alice, 'Public');
  alicePrivate = await defaultFolder(alice, 'Private');
  adminPrivate = await defaultFolder(admin, 'Private');
});
afterAll(() => api.close());

describe('POST /folder', () => {
  it('creates a folder under a folder: stripped fields, inherited ACL, creator ADMIN', async () => {
    const res = await post({ parentId: alicePrivate, name: '  Data  ', description: '  about  ' }, alice.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      _id: expect.stringMatching(OBJECT_ID),
      _modelType: 'folder',
      _accessLevel: 2,
      name: 'Data',
      description: 'about',
      parentCollection: 'folder',
      parentId: alicePrivate,
      baseParentType: 'user',
      baseParentId: alice._id,
      creatorId: alice._id,
      created: expect.stringMatching(ISO),
      updated: res.body.created,
      size: 0,
      public: false,
      metadata: {},
    });
    const doc = await folder(res.body._id);
    expect(doc.access).toEqual({ users: [{ id: alice._id, level: 2, flags: [] }], groups: [] });
    expect(doc.lowerName).toBe('data');
  });

  it('defaults parentType to folder and description to empty', async () => {
    const res = await post({ parentId: alicePublic, name: unique() }, alice.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ parentCollection: 'folder', description: '', public: true });
  });

  it('copies public and access from a folder parent, then gives the creator ADMIN', async () => {
    const parent = await create(alicePrivate, alice.token);
    const access = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 1 },
      ],
      groups: [],
    };
    expect((await putAccess(parent, { access: JSON.stringify(access), public: 'true' }, alice.token)).status).toBe(200);
    const res = await post({ parentId: parent, name: unique() }, bob.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ public: true, creatorId: bob._id, _accessLevel: 2 });
    expect((await folder(res.body._id)).access).toEqual({
      users: [
        { id: alice._id, level: 2, flags: [] },
        { id: bob._id, level: 2, flags: [] },
      ],
      groups: [],
    });
  });

  it('stores no public field under a user unless public is given', async () => {
    const plain = await post({ parentType: 'user', parentId: alice._id, name: unique() }, alice.token);
    expect(plain.status).toBe(200);
    expect(plain.body).not.toHaveProperty('public');
    expect(plain.body).toMatchObject({
      parentCollection: 'user',
      parentId: alice._id,
      baseParentType: 'user',
      baseParentId: alice._id,
    });
    expect((await folder(plain.body._id)).access).toEqual({
      users: [{ id: alice._id, level: 2, flags: [] }],
      groups: [],
    });
    const explicit = await post(
      { parentType: 'user', parentId: alice._id, name: unique(), public: 'yes' },
      alice.token,
    );
    expect(explicit.body.public).toBe(true);
  });

  it('copies public (default false) and access from a collection parent', async () => {
    const coll = await api
      .as(admin)
      .post('/collection')
      .type('form')
      .send({ name: unique('coll'), public: 'true' });
    expect(coll.status).toBe(200);
    const res = await post({ parentType: 'collection', parentId: coll.body._id, name: unique() }, admin.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      parentCollection: 'collection',
      baseParentType: 'collection',
      baseParentId: coll.body._id,
      public: true,
    });
    const collectionDoc = await api.runtime.services.readModel.collections.get(coll.body._id);
    expect((await folder(res.body._id)).access).toEqual(collectionDoc!.access);
  });

  it('lets an explicit public override the inherited one', async () => {
    const res = await post({ parentId: alicePublic, name: unique(), public: 'false' }, alice.token);
    expect(res.body.public).toBe(false);
    const res2 = await post({ parentId: alicePrivate, name: unique(), public: 'TRUE ' }, alice.token);
    expect(res2.body.public).toBe(true);
  });

  it('records the given metadata (nulls dropped)', async () => {
    const res = await post(
      { parentId: alicePrivate, name: unique(), metadata: JSON.stringify({ a: 1, b: null, c: { 'd.e': [1] } }) },
      alice.token,
    );
    expect(res.status).toBe(200);
    expect(res.body.metadata).toEqual({ a: 1, c: { 'd.e': [1] } });
    expect(res.body.updated).toBe(res.body.created);
  });

  it('refuses invalid metadata keys and saves nothing', async () => {
    const name = unique();
    for (const [metadata, message] of [
      [{ 'a.b': 1 }, 'Invalid key a.b: keys must not contain the "." character.'],
      [{ $a: 1 }, 'Invalid key $a: keys must not start with the "$" character.'],
      [{ '': 1 }, 'Key names must not be empty.'],
    ] as const) {
      const res = await post({ parentId: alicePrivate, name, metadata: JSON.stringify(metadata) }, alice.token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message, type: 'validation' });
    }
    expect(await childNamed(alicePrivate, name)).toEqual([]);
  });

  it('validates the metadata parameter as a JSON object', async () => {
    const bad = await post({ parentId: alicePrivate, name: unique(), metadata: '{nope' }, alice.token);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Parameter metadata must be valid JSON.', type: 'rest' });
    const list = await post({ parentId: alicePrivate, name: unique(), metadata: '[1]' }, alice.token);
    expect(list.body).toEqual({ message: 'Parameter metadata must be a JSON object.', type: 'rest' });
  });

  it('refuses an empty name', async () => {
    const res = await post({ parentId: alicePrivate, name: '   ' }, alice.token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Folder name must not be empty.', type: 'validation', field: 'name' });
  });

  it('keeps sibling names unique (exact, case-sensitive)', async () => {
    const name = unique('Same');
    expect((await post({ parentId: alicePrivate, name }, alice.token)).status).toBe(200);
    const dup = await post({ parentId: alicePrivate, name: ` ${name} ` }, alice.token);
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({
      message: 'A folder with that name already exists here.',
      type: 'validation',
      field: 'name',
    });
    expect((await post({ parentId: alicePrivate, name: name.toLowerCase() }, alice.token)).status).toBe(200);
    expect((await post({ parentId: alicePublic, name }, alice.token)).status).toBe(200);
  });

  it('refuses a name an item holds in that folder', async () => {
    const parent = await create(alicePrivate, alice.token);
    // No item route yet: record the item's creation directly (the event is the items' published contract).
    const itemId = '65f0000000000000000000ff';
    const { eventStore, projector } = api.runtime.services;
    const appended = await eventStore.appendToStream(
      itemStream(itemId),
      toNewEvents(
        [
          {
            type: 'ItemCreated',
            data: {
              itemId,
              folderId: parent,
              name: 'report.txt',
              description: '',
              creatorId: alice._id,
              created: '2024-01-01T00:00:00+00:00',
              meta: {},
            },
          },
        ],
        systemMeta('test-item'),
      ),
      { expectedState: 'no_stream' },
    );
    await projector.waitFor(appended.position);
    const res = await post({ parentId: parent, name: 'report.txt' }, alice.token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'An item with that name already exists here.',
      type: 'validation',
      field: 'name',
    });
    const reuse = await post({ parentId: parent, name: 'report.txt', reuseExisting: 'true' }, alice.token);
    expect(reuse.body).toEqual({
      message: 'An item with that name already exists here.',
      type: 'validation',
      field: 'name',
    });
  });

  it('reuses an existing folder of that exact name, merging metadata into it', async () => {
    const name = unique('Reuse');
    const first = await post({ parentId: alicePrivate, name, metadata: JSON.stringify({ a: 1, b: 2 }) }, alice.token);
    const again = await post({ parentId: alicePrivate, name, reuseExisting: 'true' }, alice.token);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    await sleep(5);
    const merged = await post(
      { parentId: alicePrivate, name: ` ${name}`, reuseExisting: 'on', metadata: JSON.stringify({ b: null, c: 3 }) },
      alice.token,
    );
    expect(merged.status).toBe(200);
    expect(merged.body._id).toBe(first.body._id);
    expect(merged.body.metadata).toEqual({ a: 1, c: 3 });
    expect(merged.body.updated > first.body.updated).toBe(true);
    const other = await post({ parentId: alicePrivate, name: name.toUpperCase(), reuseExisting: 'true' }, alice.token);
    expect(other.body._id).not.toBe(first.body._id);
  });

  it('checks the parameters in order', async () => {
    const badType = await post({ parentType: 'item', parentId: alicePrivate, name: 'x' }, alice.token);
    expect(badType.status).toBe(400);
    expect(badType.body).toEqual({
      message: 'Invalid value for parentType: "item". Allowed values: folder, user, collection.',
      type: 'rest',
    });
    expect((await post({ name: 'x' }, alice.token)).body).toEqual({
      message: "Parameter 'parentId' is required.",
      type: 'rest',
    });
    expect((await post({ parentId: alicePrivate }, alice.token)).body).toEqual({
      message: "Parameter 'name' is required.",
      type: 'rest',
    });
  });

  it('refuses an unknown parent', async () => {
    const missing = '65f0000000000000000000ee';
    const res = await post({ parentId: missing, name: 'x' }, alice.token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: `No such folder: ${missing}`, type: 'validation', field: 'id' });
    const user = await post({ parentType: 'user', parentId: missing, name: 'x' }, alice.token);
    expect(user.body).toEqual({ message: `No such user: ${missing}`, type: 'validation', field: 'id' });
  });

  it('needs a logged-in user with WRITE on the parent and the data.write scope', async () => {
    expect((await post({ parentId: alicePublic, name: 'x' }, null)).status).toBe(401);
    expect((await post({ parentId: alicePublic, name: 'x' }, null)).body).toEqual({
      message: 'You must be logged in.',
      type: 'access',
    });
    const denied = await post({ parentId: alicePublic, name: 'x' }, bob.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      message: `Write access denied for folder ${alicePublic} (user ${bob._id}).`,
      type: 'access',
    });
    const deniedUser = await post({ parentType: 'user', parentId: alice._id, name: 'x' }, bob.token);
    expect(deniedUser.body).toEqual({
      message: `Write access denied for user ${alice._id} (user ${bob._id}).`,
      type: 'access',
    });
    const readOnly = await post({ parentId: alicePublic, name: 'x' }, await scopedToken(alice, [Scope.DATA_READ]));
    expect(readOnly.status).toBe(401);
    expect(readOnly.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    const writeScoped = await post(
      { parentId: alicePublic, name: unique() },
      await scopedToken(alice, [Scope.DATA_WRITE]),
    );
    expect(writeScoped.status).toBe(200);
  });

  it('lets a site admin create anywhere (and become ADMIN of the new folder)', async () => {
    const res = await post({ parentId: alicePrivate, name: unique() }, admin.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ creatorId: admin._id, baseParentId: alice._id, _accessLevel: 2 });
    expect((await folder(res.body._id)).access.users).toEqual([
      { id: alice._id, level: 2, flags: [] },
      { id: admin._id, level: 2, flags: [] },
    ]);
  });

  it('records the creation with its provenance', async () => {
    const id = await create(alicePrivate, alice.token);
    const events = await api.runtime.services.commands.readAll(folderStream(id));
    expect(events.map((e) => e.type)).toEqual(['FolderCreated']);
    expect(events[0].metadata).toMatchObject({ userId: alice._id, requestId: expect.any(String) });
  });
});

describe('PUT /folder/:id', () => {
  it('renames and re-describes (stripped), advancing updated only', async () => {
    const created = await post({ parentId: alicePrivate, name: unique() }, alice.token);
    await sleep(5);
    const name = unique('Renamed');
    const res = await put(created.body._id, { name: `  ${name} `, description: ' new words ' }, alice.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created.body, name, description: 'new words', updated: expect.stringMatching(ISO) });
    expect(res.body.updated > created.body.updated).toBe(true);
    expect((await folder(created.body._id)).lowerName).toBe(name.toLowerCase());
  });

  it('advances updated even when nothing is given', async () => {
    const created = await post({ parentId: alicePrivate, name: unique() }, alice.token);
    await sleep(5);
    const res = await put(created.body._id, {}, alice.token);
    expect(res.status).toBe(200);
    expect(res.body.updated > created.body.updated).toBe(true);
    expect(res.body.name).toBe(created.body.name);
  });

  it('refuses an empty name', async () => {
    const id = await create(alicePrivate, alice.token);
    const res = await put(id, { name: ' ' }, alice.token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Folder name must not be empty.', type: 'validation', field: 'name' });
  });

  it('checks sibling names on rename only when the name changes, and frees the old name', async () => {
    const taken = unique('Taken');
    await post({ parentId: alicePrivate, name: taken }, alice.token);
    const created = await post({ parentId: alicePrivate, name: unique() }, alice.token);
    const id = created.body._id;
    const dup = await put(id, { name: taken }, alice.token);
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({
      message: 'A folder with that name already exists here.',
      type: 'validation',
      field: 'name',
    });
    expect((await put(id, { name: created.body.name }, alice.token)).status).toBe(200);
    const newName = unique('Fresh');
    expect((await put(id, { name: newName }, alice.token)).status).toBe(200);
    expect((await post({ parentId: alicePrivate, name: created.body.name }, alice.token)).status).toBe(200);
    expect((await post({ parentId: alicePrivate, name: newName }, alice.token)).body.message).toBe(
      'A folder with that name already exists here.',
    );
    expect((await put(id, { name: newName.toUpperCase() }, alice.token)).status).toBe(200);
  });

  it('merges metadata, nulls deleting keys', async () => {
    const id = (
      await post({ parentId: alicePrivate, name: unique(), metadata: JSON.stringify({ a: 1, b: 2 }) }, alice.token)
    ).body._id;
    const res = await put(id, { metadata: JSON.stringify({ b: null, c: 'x' }) }, alice.token);
    expect(res.status).toBe(200);
    expect(res.body.metadata).toEqual({ a: 1, c: 'x' });
    const list = await put(id, { metadata: '[]' }, alice.token);
    expect(list.body).toEqual({ message: 'Parameter metadata must be a JSON object.', type: 'rest' });
  });

  it('saves nothing when the metadata is invalid (atomic, unlike the reference)', async () => {
    const created = await post({ parentId: alicePrivate, name: unique() }, alice.token);
    const res = await put(created.body._id, { name: unique(), metadata: JSON.stringify({ 'x.y': 1 }) }, alice.token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'Invalid key x.y: keys must not contain the "." character.',
      type: 'validation',
    });
    expect(await folder(created.body._id)).toMatchObject({ name: created.body.name, updated: created.body.updated });
  });

  it('moves a folder with its subtree, rewriting ancestry and base parent', async () => {
    const a = await create(alicePrivate, alice.token);
    const b = await create(a, alice.token);
    const c = await create(b, alice.token);
    const before = await folder(b);
    await sleep(5);
    const res = await put(b, { parentType: 'folder', parentId: adminPrivate }, admin.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      parentCollection: 'folder',
      parentId: adminPrivate,
      baseParentType: 'user',
      baseParentId: admin._id,
    });
    expect(res.body.updated > before.updated).toBe(true);
    const folders = api.runtime.services.readModel.folders;
    expect(await folders.ancestorIds(c)).toEqual([adminPrivate, b]);
    expect(await folder(c)).toMatchObject({ parentId: b, baseParentType: 'user', baseParentId: admin._id });
    expect(await folders.isSelfOrDescendant(a, c)).toBe(false);
    // The ACL is not changed by a move.
    expect((await folder(b)).access).toEqual(before.access);

    const toUser = await put(b, { parentType: ' user ', parentId: alice._id }, admin.token);
    expect(toUser.body).toMatchObject({ parentCollection: 'user', parentId: alice._id, baseParentId: alice._id });
    expect(await folders.ancestorIds(c)).toEqual([b]);
    const events = await api.runtime.services.commands.readAll(folderStream(b));
    expect(events.map((e) => e.type)).toEqual([
      'FolderCreated',
      'FolderUpdated',
      'FolderMoved',
      'FolderUpdated',
      'FolderMoved',
    ]);
  });

  it('moves the name claim with the folder', async () => {
    const a = await create(alicePrivate, alice.token);
    const name = unique('Wanderer');
    const moving = (await post({ parentId: alicePrivate, name }, alice.token)).body._id;
    expect((await put(moving, { parentType: 'folder', parentId: a }, alice.token)).status).toBe(200);
    expect((await post({ parentId: alicePrivate, name }, alice.token)).status).toBe(200);
    const dup = await post({ parentId: a, name }, alice.token);
    expect(dup.body.message).toBe('A folder with that name already exists here.');
  });

  it('refuses a move into a parent that already holds that name', async () => {
    const target = await create(alicePrivate, alice.token);
    const name = unique('Clash');
    await post({ parentId: target, name }, alice.token);
    const moving = (await post({ parentId: alicePrivate, name }, alice.token)).body._id;
    const res = await put(moving, { parentType: 'folder', parentId: target }, alice.token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'A folder with that name already exists here.',
      type: 'validation',
      field: 'name',
    });
    expect((await folder(moving)).parentId).toBe(alicePrivate);
    // A rename in the same request makes the final name free there.
    const renamed = await put(moving, { name: unique('Other'), parentType: 'folder', parentId: target }, alice.token);
    expect(renamed.status).toBe(200);
    expect(renamed.body.parentId).toBe(target);
  });

  it('refuses a move underneath itself', async () => {
    const a = await create(alicePrivate, alice.token);
    const b = await create(a, alice.token);
    const c = await create(b, alice.token);
    for (const parentId of [a, b, c]) {
      const res = await put(a, { parentType: 'folder', parentId }, alice.token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'You may not move a folder underneath itself.', type: 'validation' });
    }
    expect((await folder(a)).parentId).toBe(alicePrivate);
  });

  it('moves nothing when the parent is the current one or when only one of parentType/parentId is given', async () => {
    const a = await create(alicePrivate, alice.token);
    const same = await put(a, { parentType: 'folder', parentId: alicePrivate, description: 'kept' }, alice.token);
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ parentId: alicePrivate, description: 'kept' });
    const onlyId = await put(a, { parentId: alicePublic }, alice.token);
    expect(onlyId.body.parentId).toBe(alicePrivate);
    const onlyType = await put(a, { parentType: 'user' }, alice.token);
    expect(onlyType.body.parentId).toBe(alicePrivate);
    const events = await api.runtime.services.commands.readAll(folderStream(a));
    expect(events.map((e) => e.type)).not.toContain('FolderMoved');
  });

  it('needs WRITE on the new parent, and saves nothing when the move fails', async () => {
    const created = await post({ parentId: alicePrivate, name: unique() }, alice.token);
    const id = created.body._id;
    const denied = await put(id, { name: unique(), parentType: 'folder', parentId: adminPrivate }, alice.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      message: `Write access denied for folder ${adminPrivate} (user ${alice._id}).`,
      type: 'access',
    });
    const missing = '65f0000000000000000000ee';
    const gone = await put(id, { description: 'lost', parentType: 'collection', parentId: missing }, alice.token);
    expect(gone.status).toBe(400);
    expect(gone.body).toEqual({ message: `No such collection: ${missing}`, type: 'validation', field: 'id' });
    expect(await folder(id)).toMatchObject({
      name: created.body.name,
      description: '',
      updated: created.body.updated,
      parentId: alicePrivate,
    });
    const badType = await put(id, { parentType: 'item', parentId: missing }, alice.token);
    expect(badType.body).toEqual({
      message: 'Invalid value for parentType: "item". Allowed values: folder, user, collection.',
      type: 'rest',
    });
  });

  it('needs a logged-in user with WRITE and the data.write scope', async () => {
    const id = await create(alicePrivate, alice.token);
    expect((await put(id, { name: 'x' }, null)).body).toEqual({ message: 'You must be logged in.', type: 'access' });
    const denied = await put(id, { name: 'x' }, bob.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: `Write access denied for folder ${id} (user ${bob._id}).`, type: 'access' });
    const readOnly = await put(id, { name: 'x' }, await scopedToken(alice, [Scope.DATA_READ]));
    expect(readOnly.status).toBe(401);
    expect(readOnly.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    const invalid = await put('nope', { name: 'x' }, alice.token);
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ message: 'Invalid folder id (nope).', type: 'rest' });
    const byAdmin = await put(id, { name: unique() }, admin.token);
    expect(byAdmin.status).toBe(200);
  });
});

describe('PUT /folder/:id/metadata', () => {
  it('merges the body into the metadata; null deletes unless allowNull', async () => {
    const created = await post(
      { parentId: alicePrivate, name: unique(), metadata: JSON.stringify({ a: 1, b: 2 }) },
      alice.token,
    );
    const id = created.body._id;
    await sleep(5);
    const res = await putMetadata(id, JSON.stringify({ b: null, c: { nested: ['x'] }, ünï: true }), alice.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...created.body,
      metadata: { a: 1, c: { nested: ['x'] }, ünï: true },
      updated: expect.stringMatching(ISO),
    });
    expect(res.body.updated > created.body.updated).toBe(true);
    const kept = await putMetadata(id, JSON.stringify({ a: null }), alice.token, { allowNull: 'true' });
    expect(kept.body.metadata).toEqual({ a: null, c: { nested: ['x'] }, ünï: true });
    const dropped = await putMetadata(id, JSON.stringify({ a: null }), alice.token, { allowNull: 'false' });
    expect(dropped.body.metadata).toEqual({ c: { nested: ['x'] }, ünï: true });
  });

  it('validates every top-level key and saves nothing on failure', async () => {
    const id = await create(alicePrivate, alice.token);
    const before = await folder(id);
    for (const [metadata, message] of [
      [{ ok: 1, 'a.b': 1 }, 'Invalid key a.b: keys must not contain the "." character.'],
      [{ $set: 1 }, 'Invalid key $set: keys must not start with the "$" character.'],
      [{ '': 1 }, 'Key names must not be empty.'],
    ] as const) {
      const res = await putMetadata(id, JSON.stringify(metadata), alice.token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message, type: 'validation' });
    }
    expect(await folder(id)).toEqual(before);
    const nested = await putMetadata(id, JSON.stringify({ ok: { 'a.b': 1, $c: 2 } }), alice.token);
    expect(nested.status).toBe(200);
  });

  it('reads a JSON object from the body', async () => {
    const id = await create(alicePrivate, alice.token);
    const empty = await api.as(alice).put(`/folder/${id}/metadata`).set('Content-Type', 'application/json').send('');
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ message: 'JSON parameter metadata must be passed in request body.', type: 'rest' });
    expect((await putMetadata(id, '[1, 2]', alice.token)).body).toEqual({
      message: 'Parameter metadata must be a JSON object.',
      type: 'rest',
    });
    expect((await putMetadata(id, '{"a": ', alice.token)).body).toEqual({
      message: 'Invalid JSON passed in request body.',
      type: 'rest',
    });
    expect((await putMetadata(id, '{"a": NaN}', alice.token)).body).toEqual({
      message: 'Error: "NaN" is not valid JSON.',
      type: 'rest',
    });
  });

  it('needs a logged-in user with WRITE and the data.write scope', async () => {
    const id = await create(alicePublic, alice.token);
    expect((await putMetadata(id, '{"a":1}', null)).body).toEqual({
      message: 'You must be logged in.',
      type: 'access',
    });
    const denied = await putMetadata(id, '{"a":1}', bob.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: `Write access denied for folder ${id} (user ${bob._id}).`, type: 'access' });
    const readOnly = await putMetadata(id, '{"a":1}', await scopedToken(alice, [Scope.DATA_READ]));
    expect(readOnly.status).toBe(401);
    expect((await putMetadata(id, '{"a":1}', admin.token)).body.metadata).toEqual({ a: 1 });
  });
});

describe('DELETE /folder/:id/metadata', () => {
  it('removes the named keys, ignoring missing ones, and advances updated', async () => {
    const created = await post(
      { parentId: alicePrivate, name: unique(), metadata: JSON.stringify({ a: 1, b: 2, c: 3 }) },
      alice.token,
    );
    await sleep(5);
    const res = await deleteMetadata(created.body._id, JSON.stringify(['a', 'c', 'missing']), alice.token);
    expect(res.status).toBe(200);
    expect(res.body.metadata).toEqual({ b: 2 });
    expect(res.body.updated > created.body.updated).toBe(true);
  });

  it('validates the names before deleting anything', async () => {
    const id = (await post({ parentId: alicePrivate, name: unique(), metadata: JSON.stringify({ a: 1 }) }, alice.token))
      .body._id;
    for (const [fields, message] of [
      [['a', 'x.y'], 'Invalid key x.y: keys must not contain the "." character.'],
      [['$a'], 'Invalid key $a: keys must not start with the "$" character.'],
      [[''], 'Key names must not be empty.'],
    ] as const) {
      const res = await deleteMetadata(id, JSON.stringify(fields), alice.token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message, type: 'validation' });
    }
    expect((await folder(id)).meta).toEqual({ a: 1 });
  });

  it('takes a JSON array of strings from the body', async () => {
    const id = await create(alicePrivate, alice.token);
    const notList = await deleteMetadata(id, '"a"', alice.token);
    expect(notList.status).toBe(400);
    expect(notList.body).toEqual({
      message:
        "Invalid JSON object for parameter fields: 'a' is not of type 'array'\n\nFailed validating 'type' in schema:\n    {'items': {'type': 'string'}, 'type': 'array'}\n\nOn instance:\n    'a'",
      type: 'rest',
    });
    const notString = await deleteMetadata(id, '["a", 2]', alice.token);
    expect(notString.body.message).toBe(
      "Invalid JSON object for parameter fields: 2 is not of type 'string'\n\nFailed validating 'type' in schema['items']:\n    {'type': 'string'}\n\nOn instance[1]:\n    2",
    );
    const empty = await api.as(alice).delete(`/folder/${id}/metadata`).set('Content-Length', '0');
    expect(empty.body).toEqual({ message: 'JSON parameter fields must be passed in request body.', type: 'rest' });
  });

  it('needs a logged-in user with WRITE', async () => {
    const id = await create(alicePublic, alice.token);
    expect((await deleteMetadata(id, '["a"]', null)).status).toBe(401);
    const denied = await deleteMetadata(id, '["a"]', bob.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: `Write access denied for folder ${id} (user ${bob._id}).`, type: 'access' });
    expect((await deleteMetadata(id, '["a"]', await scopedToken(alice, [Scope.DATA_READ]))).status).toBe(401);
  });
});

describe('PUT /folder/:id/access', () => {
  it('replaces the ACL and answers with the folder plus its raw access list; updated is kept', async () => {
    const created = await post({ parentId: alicePrivate, name: unique() }, alice.token);
    const id = created.body._id;
    await sleep(5);
    const access = {
      users: [
        { id: alice._id, level: 2, login: 'alice', name: 'First Last', flags: ['ignored'] },
        { id: bob._id.toUpperCase(), level: 0 },
      ],
      groups: [],
    };
    const res = await putAccess(id, { access: JSON.stringify(access) }, alice.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...created.body,
      access: {
        users: [
          { id: alice._id, level: 2, flags: [] },
          { id: bob._id, level: 0, flags: [] },
        ],
        groups: [],
      },
    });
    expect(await folder(id)).toMatchObject({ updated: created.body.updated, public: false });
    expect((await putMetadata(id, '{"a":1}', bob.token)).status).toBe(403);
  });

  it('sets public and publicFlags when given', async () => {
    const id = await create(alicePrivate, alice.token);
    const acl = JSON.stringify({ users: [{ id: alice._id, level: 2 }] });
    const res = await putAccess(id, { access: acl, public: 'true', publicFlags: '["anything"]' }, alice.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      public: true,
      publicFlags: [],
      access: { users: [{ id: alice._id, level: 2, flags: [] }], groups: [] },
    });
    const anon = await api.runtime.services.readModel.folders.listChildren({
      parentType: 'folder',
      parentId: alicePrivate,
      viewer: null,
      paging: { limit: 0, offset: 0, sort: 'lowerName', sortdir: 1 },
    });
    expect(anon.rows.map((f) => f._id)).toContain(id);
    const unset = await putAccess(id, { access: acl }, alice.token);
    expect(unset.body.public).toBe(true);
  });

  it('lets a granted WRITE user write', async () => {
    const id = await create(alicePrivate, alice.token);
    const access = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 1 },
      ],
    };
    await putAccess(id, { access: JSON.stringify(access) }, alice.token);
    expect((await putMetadata(id, '{"by":"bob"}', bob.token)).status).toBe(200);
    const denied = await putAccess(id, { access: JSON.stringify(access) }, bob.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: `Admin access denied for folder ${id} (user ${bob._id}).`, type: 'access' });
  });

  it('validates the access list and the parameters', async () => {
    const id = await create(alicePrivate, alice.token);
    const cases: [Record<string, string>, unknown][] = [
      [{}, { message: "Parameter 'access' is required.", type: 'rest' }],
      [{ access: '[]' }, { message: 'Parameter access must be a JSON object.', type: 'rest' }],
      [{ access: '{bad' }, { message: 'Parameter access must be valid JSON.', type: 'rest' }],
      [
        { access: JSON.stringify({ users: [{ id: bob._id }] }) },
        { message: 'Invalid access list', type: 'validation', field: 'access' },
      ],
      [
        { access: JSON.stringify({ users: [{ id: bob._id, level: 5 }] }) },
        { message: 'Invalid access level', type: 'validation', field: 'access' },
      ],
      [
        { access: '{}', publicFlags: '{}' },
        { message: 'Parameter publicFlags must be a JSON array.', type: 'rest' },
      ],
    ];
    for (const [form, body] of cases) {
      const res = await putAccess(id, form, alice.token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(body);
    }
    expect((await folder(id)).access).toEqual({ users: [{ id: alice._id, level: 2, flags: [] }], groups: [] });
  });

  it('needs a logged-in user with ADMIN and the data.own scope; site admins pass', async () => {
    const id = await create(alicePrivate, alice.token);
    const acl = JSON.stringify({ users: [{ id: alice._id, level: 2 }] });
    expect((await putAccess(id, { access: acl }, null)).body).toEqual({
      message: 'You must be logged in.',
      type: 'access',
    });
    expect((await putAccess(id, { access: acl }, await scopedToken(alice, [Scope.DATA_WRITE]))).status).toBe(401);
    expect((await putAccess(id, { access: acl }, await scopedToken(alice, [Scope.DATA_OWN]))).status).toBe(200);
    const byAdmin = await putAccess(id, { access: JSON.stringify({}) }, admin.token);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.access).toEqual({ users: [], groups: [] });
    expect(byAdmin.body._accessLevel).toBe(2);
    // Alice lost her own access: she now gets a 403 on the folder.
    expect((await putAccess(id, { access: acl }, alice.token)).status).toBe(403);
  });

  describe('recurse', () => {
    /** R ─ C1 ─ G1, R ─ C2 ─ G2, all alice's; C2 then given to bobby alone (alice loses ADMIN there). */
    async function tree() {
      const r = await create(alicePrivate, alice.token);
      const c1 = await create(r, alice.token);
      const g1 = await create(c1, alice.token);
      const c2 = await create(r, alice.token);
      const g2 = await create(c2, alice.token);
      const bobOnly = { users: [{ id: bob._id, level: 2, flags: [] }], groups: [] };
      expect((await putAccess(c2, { access: JSON.stringify(bobOnly) }, admin.token)).status).toBe(200);
      return { r, c1, g1, c2, g2, bobOnly };
    }
    const progressRecords = async (user: TestUser) =>
      (await api.runtime.services.notifications.list({ userId: user._id, tokenId: null })).filter(
        (n) => n.data.title === 'Updating permissions',
      );

    it('applies the policy to descendants reachable through folders where the caller has ADMIN, with progress', async () => {
      const { r, c1, g1, c2, g2, bobOnly } = await tree();
      const before = await Promise.all([r, c1, g1, c2, g2].map(folder));
      const access = {
        users: [
          { id: alice._id, level: 2 },
          { id: bob._id, level: 0 },
        ],
        groups: [],
      };
      const res = await putAccess(
        r,
        { access: JSON.stringify(access), public: 'true', recurse: 'true', progress: 'true' },
        alice.token,
      );
      expect(res.status).toBe(200);
      const expected = {
        users: [
          { id: alice._id, level: 2, flags: [] },
          { id: bob._id, level: 0, flags: [] },
        ],
        groups: [],
      };
      expect(res.body.access).toEqual(expected);
      for (const id of [r, c1, g1]) expect(await folder(id)).toMatchObject({ access: expected, public: true });
      expect(await folder(c2)).toMatchObject({ access: bobOnly, public: false });
      expect(await folder(g2)).toMatchObject({ access: before[4].access, public: false });
      const after = await Promise.all([r, c1, g1, c2, g2].map(folder));
      expect(after.map((f) => f.updated)).toEqual(before.map((f) => f.updated));
      // The ACL rows follow the documents: bobby may now read C1's child.
      const bobView = { id: bob._id, admin: false, groups: [] };
      const paging = { limit: 0, offset: 0, sort: 'lowerName', sortdir: 1 as const };
      const listed = await api.runtime.services.readModel.folders.listChildren({
        parentType: 'folder',
        parentId: c1,
        viewer: bobView,
        paging,
      });
      expect(listed.rows.map((f) => f._id)).toEqual([g1]);
      const [record] = await progressRecords(alice);
      expect(record.data).toMatchObject({
        title: 'Updating permissions',
        total: 3,
        current: 3,
        state: 'success',
        message: 'Done',
      });
    });

    it('reaches the whole subtree for a site admin', async () => {
      const { r, c1, g1, c2, g2 } = await tree();
      const access = { users: [{ id: admin._id, level: 2 }], groups: [] };
      const res = await putAccess(
        r,
        { access: JSON.stringify(access), publicFlags: '[]', recurse: 'yes' },
        admin.token,
      );
      expect(res.status).toBe(200);
      for (const id of [r, c1, g1, c2, g2]) {
        expect(await folder(id)).toMatchObject({
          access: { users: [{ id: admin._id, level: 2, flags: [] }], groups: [] },
          publicFlags: [],
        });
      }
      expect(await progressRecords(admin)).toEqual([]);
    });

    it('records no progress without recurse, and touches only the folder', async () => {
      const { r, c1 } = await tree();
      const c1Before = await folder(c1);
      const acl = JSON.stringify({ users: [{ id: alice._id, level: 2 }] });
      const before = (await progressRecords(alice)).length;
      expect((await putAccess(r, { access: acl, public: 'true', progress: 'true' }, alice.token)).status).toBe(200);
      expect(await progressRecords(alice)).toHaveLength(before);
      expect(await folder(c1)).toEqual(c1Before);
    });
  });
});

it('rebuilding the read models from the log gives exactly the live state', async () => {
  const { eventStore, readModel } = api.runtime.services;
  const live = await readModel.dump();
  await rebuild(eventStore, readModel);
  expect(await readModel.dump()).toEqual(live);
});
