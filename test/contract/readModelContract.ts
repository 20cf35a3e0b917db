import { blobRefsOf, DEFAULT_ASSETSTORE_ID } from '../../src/domain/assetstoreBlobRef';
import type { AccessList, Viewer } from '../../src/domain/access';
import type {
  ApiKeyDoc,
  CollectionDoc,
  FileDoc,
  FolderDoc,
  ItemDoc,
  ReadModel,
  ReadModelTx,
  UserDoc,
} from '../../src/ports/readModel';
import { pagingOf } from '../../src/http/params';
import { deriveId } from '../../src/domain/ids';
import { accessTargets } from '../../src/projections/folderAccess';
import { lateEventsContract } from './lateEventsContract';
import {
  changeOf,
  createUnder,
  folderPresent,
  folderRow,
  itemRow,
  moveInto,
  parentPresent,
} from '../../src/projections/lateEvents';

/**
 * The ReadModel contract, run against every adapter (SQLite, MongoDB over the driver stand-in, a real MongoDB when
 * MONGODB_URL is set). It drives the port directly: `apply(projection, position, tx => …)` with the write calls a
 * projection makes, then the queries the routes call. `make` returns a fresh, empty read model. Writes racing a
 * delete go through the projection layer's rule (src/projections/lateEvents.ts), as the projections make them: its
 * meaning rests on `tx.ifPresent`, which every adapter must honour.
 */
export interface ReadModelFixture {
  readModel: ReadModel;
  dispose(): Promise<void>;
}

const P = 'contract';
const T0 = '2024-01-01T00:00:00.000Z';
const T1 = '2024-02-01T00:00:00.000Z';

const acl = (users: [string, 0 | 1 | 2][] = [], groups: [string, 0 | 1 | 2][] = []): AccessList => ({
  users: users.map(([id, level]) => ({ id, level, flags: [] })),
  groups: groups.map(([id, level]) => ({ id, level, flags: [] })),
});

export function user(id: string, login: string, extra: Partial<UserDoc> = {}): UserDoc {
  return {
    _id: id,
    login,
    email: `${login}@example.com`,
    firstName: 'First',
    lastName: login.toUpperCase(),
    admin: false,
    public: true,
    created: T0,
    size: 0,
    groups: [],
    groupInvites: [],
    status: 'enabled',
    emailVerified: true,
    access: acl([[id, 2]]),
    passwordHash: 'scrypt$x',
    ...extra,
  };
}

export function collection(id: string, name: string, extra: Partial<CollectionDoc> = {}): CollectionDoc {
  return {
    _id: id,
    name,
    description: '',
    public: false,
    access: acl(),
    created: T0,
    updated: T0,
    size: 0,
    meta: {},
    creatorId: null,
    ...extra,
  };
}

export function folder(
  id: string,
  name: string,
  parent: { type: 'folder' | 'user' | 'collection'; id: string },
  extra: Partial<FolderDoc> = {},
): Omit<FolderDoc, 'baseParentType' | 'baseParentId'> {
  return {
    _id: id,
    name,
    lowerName: name.toLowerCase(),
    description: '',
    parentCollection: parent.type,
    parentId: parent.id,
    creatorId: null,
    created: T0,
    updated: T0,
    size: 0,
    public: false,
    access: acl(),
    meta: {},
    ...extra,
  };
}

export function item(
  id: string,
  name: string,
  folderId: string,
  extra: Partial<ItemDoc> = {},
): Omit<ItemDoc, 'baseParentType' | 'baseParentId' | 'size' | 'lowerName'> {
  return { _id: id, name, description: '', folderId, creatorId: null, created: T0, updated: T0, meta: {}, ...extra };
}

export function file(id: string, itemId: string, size: number, blobId: string, extra: Partial<FileDoc> = {}): FileDoc {
  return {
    _id: id,
    itemId,
    name: `${id}.bin`,
    mimeType: 'application/octet-stream',
    size,
    blobId,
    creatorId: null,
    created: T0,
    exts: ['bin'],
    ...extra,
  };
}

/** An ObjectId-long id: `prefix`, then `n` zero-padded (`numberedId('f', 7)` is `f00000000000000000000007`). */
export const numberedId = (prefix: string, n: number) => `${prefix}${String(n).padStart(24 - prefix.length, '0')}`;

/** `count` folders `f…` below `rootId`, a few levels deep: the first `fanout` in the root, each next in `f(n % fanout)`. */
export function insertFolderTree(tx: ReadModelTx, rootId: string, count: number, fanout: number): void {
  for (let n = 0; n < count; n++) {
    const parent = n < fanout ? rootId : numberedId('f', n % fanout);
    tx.folders.insert(folder(numberedId('f', n), `folder ${n}`, { type: 'folder', id: parent }));
  }
}

/** In each of the folders `f0…` of {@link insertFolderTree}, an item `i…` holding one file `x…` of one byte. */
export function insertItemsWithFiles(tx: ReadModelTx, count: number): void {
  for (let n = 0; n < count; n++) {
    tx.items.insert(item(numberedId('i', n), `item ${n}`, numberedId('f', n)));
    tx.files.insert(file(numberedId('x', n), numberedId('i', n), 1, `${n % 7}`.repeat(64)));
    tx.items.addSize(numberedId('i', n), 1);
  }
}

/** A folder move as the projection makes it: nothing when the folder is gone, removed when its new parent is. */
export function moveFolder(tx: ReadModelTx, id: string, to: { parentType: 'folder' | 'collection'; parentId: string }) {
  moveInto(tx, folderRow(id), to, {
    move: (tx) => tx.folders.move(id, to.parentType, to.parentId, T1),
    remove: (tx) => tx.folders.removeSubtree(id),
  });
}

const paging = (o: Parameters<typeof pagingOf>[0] = {}) => pagingOf({ limit: 0, ...o });
const ids = (rows: { _id: string }[]) => rows.map((r) => r._id);
const viewer = (id: string, groups: string[] = [], admin = false): Viewer => ({ id, groups, admin });
const ADMIN = viewer('admin', [], true);

export function readModelContract(name: string, make: () => Promise<ReadModelFixture>): void {
  describe(`ReadModel contract: ${name}`, () => {
    let fixture: ReadModelFixture;
    let rm: ReadModel;
    let position = 0n;
    /** Applies one "event": the writes `write` makes, at the next position. */
    const apply = (write: (tx: ReadModelTx) => void) => rm.apply(P, ++position, write);

    beforeEach(async () => {
      fixture = await make();
      rm = fixture.readModel;
      position = 0n;
    });
    afterEach(() => fixture.dispose());

    lateEventsContract(() => rm);

    describe('checkpoints', () => {
      it('starts at 0, moves with each applied event and skips replays', async () => {
        expect(await rm.checkpoint(P)).toBe(0n);
        expect(await rm.apply(P, 5n, (tx) => tx.users.put(user('u1', 'alice')))).toBe(true);
        expect(await rm.checkpoint(P)).toBe(5n);
        expect(await rm.checkpoint('other')).toBe(0n);
        expect(await rm.apply(P, 5n, (tx) => tx.users.put(user('u1', 'changed')))).toBe(false);
        expect(await rm.apply(P, 3n, (tx) => tx.users.put(user('u1', 'changed')))).toBe(false);
        expect((await rm.users.get('u1'))?.login).toBe('alice');
        expect(await rm.apply(P, 6n, (tx) => tx.users.addSize('u1', 10))).toBe(true);
        expect((await rm.users.get('u1'))?.size).toBe(10);
      });

      it('handles positions beyond 2^53', async () => {
        const big = 2n ** 60n + 7n;
        expect(await rm.apply(P, big, (tx) => tx.users.put(user('u1', 'alice')))).toBe(true);
        expect(await rm.checkpoint(P)).toBe(big);
        expect(await rm.apply(P, big - 1n, (tx) => tx.users.addSize('u1', 1))).toBe(false);
        expect(await rm.apply(P, big + 1n, (tx) => tx.users.addSize('u1', 1))).toBe(true);
        expect((await rm.users.get('u1'))?.size).toBe(1);
      });

      it('reset empties the read models and checkpoints; replaying gives the same dump', async () => {
        const events: ((tx: ReadModelTx) => void)[] = [
          (tx) => tx.users.put(user('u1', 'alice')),
          (tx) => tx.collections.put(collection('c1', 'Shared', { public: true })),
          (tx) => tx.folders.insert(folder('f1', 'Top', { type: 'collection', id: 'c1' })),
          (tx) => tx.folders.insert(folder('f2', 'Sub', { type: 'folder', id: 'f1' })),
          (tx) => tx.items.insert(item('i1', 'Item', 'f2')),
          (tx) => {
            tx.files.insert(file('x1', 'i1', 7, 'b'.repeat(64)));
            tx.items.addSize('i1', 7);
          },
        ];
        for (const e of events) await apply(e);
        const live = await rm.dump();
        await rm.reset();
        expect(await rm.checkpoint(P)).toBe(0n);
        for (const [i, e] of events.entries()) await rm.apply(P, BigInt(i + 1), e);
        expect(await rm.dump()).toEqual(live);
        expect(await rm.checkpoint(P)).toBe(BigInt(events.length));
        expect((await rm.collections.get('c1'))?.size).toBe(7);
      });
    });

    describe('users, tokens and API keys', () => {
      beforeEach(async () => {
        await apply((tx) => {
          tx.users.put(user('u1', 'alice', { firstName: 'Alice', lastName: 'Cooper' }));
          tx.users.put(user('u2', 'bobby', { firstName: 'Bob', lastName: 'Barker', email: 'bob@example.com' }));
          tx.users.put(user('u3', 'carol', { firstName: 'Carol', lastName: 'Atkins' }));
        });
      });

      it('finds users by id, login and email (case-insensitively)', async () => {
        expect((await rm.users.get('u1'))?.login).toBe('alice');
        expect(await rm.users.get('nope')).toBeNull();
        expect((await rm.users.getByLogin('bobby'))?._id).toBe('u2');
        expect((await rm.users.getByEmail('BOB@Example.com'))?._id).toBe('u2');
        expect(await rm.users.count()).toBe(3);
        expect(await rm.users.get('u1')).toEqual(user('u1', 'alice', { firstName: 'Alice', lastName: 'Cooper' }));
      });

      it('lists users sorted by last name, searched by login, name or email, paged with a total', async () => {
        const all = await rm.users.list({ paging: paging({ sort: 'lastName' }) });
        expect(ids(all.rows)).toEqual(['u3', 'u2', 'u1']);
        expect(all.total).toBe(3);
        expect(ids((await rm.users.list({ text: 'BOB', paging: paging({ sort: 'lastName' }) })).rows)).toEqual(['u2']);
        expect(ids((await rm.users.list({ text: 'cooper', paging: paging({ sort: 'lastName' }) })).rows)).toEqual([
          'u1',
        ]);
        expect(ids((await rm.users.list({ text: '%', paging: paging() })).rows)).toEqual([]);
        // Email is matched only when the caller may see it (matchEmail).
        expect(ids((await rm.users.list({ text: 'bob@', paging: paging() })).rows)).toEqual([]);
        expect(ids((await rm.users.list({ text: 'bob@', matchEmail: true, paging: paging() })).rows)).toEqual(['u2']);
        const page = await rm.users.list({ paging: paging({ sort: 'login', sortdir: -1, limit: 1, offset: 1 }) });
        expect(ids(page.rows)).toEqual(['u2']);
        expect(page.total).toBe(3);
      });

      it('replaces a user on put and adds sizes', async () => {
        await apply((tx) => {
          tx.users.addSize('u1', 5);
          tx.users.addSize('u1', 2);
        });
        expect((await rm.users.get('u1'))?.size).toBe(7);
        await apply((tx) => tx.users.put(user('u1', 'alice', { admin: true })));
        expect((await rm.users.get('u1'))?.admin).toBe(true);
      });

      it('updates a user’s fields (the list sorts and searches by the new name and address), lists admins', async () => {
        await apply((tx) => {
          tx.users.update('u1', { firstName: 'Zed', lastName: 'Zulu', email: 'zed@example.com', status: 'disabled' });
          tx.users.update('u2', { admin: true, otp: { enabled: false, key: 'KEY' } });
        });
        expect(await rm.users.get('u1')).toEqual(
          user('u1', 'alice', { firstName: 'Zed', lastName: 'Zulu', email: 'zed@example.com', status: 'disabled' }),
        );
        expect((await rm.users.getByEmail('ZED@example.com'))?._id).toBe('u1');
        expect(await rm.users.getByEmail('alice@example.com')).toBeNull();
        expect(ids((await rm.users.list({ paging: paging({ sort: 'lastName' }) })).rows)).toEqual(['u3', 'u2', 'u1']);
        expect(ids((await rm.users.list({ text: 'zulu', paging: paging() })).rows)).toEqual(['u1']);
        expect((await rm.users.get('u2'))?.otp).toEqual({ enabled: false, key: 'KEY' });
        expect(ids(await rm.users.admins())).toEqual(['u2']);
        await apply((tx) => tx.users.update('u2', { otp: null }));
        expect((await rm.users.get('u2'))?.otp).toBeNull();
      });

      it('deletes a user with its tokens', async () => {
        await apply((tx) => {
          tx.tokens.put({ hash: 'h1', userId: 'u1', scope: ['core.user_auth'], created: T0, expires: T1 });
          tx.tokens.put({ hash: 'h2', userId: 'u2', scope: ['core.user_auth'], created: T0, expires: T1 });
        });
        await apply((tx) => {
          tx.tokens.deleteForUser('u1');
          tx.users.delete('u1');
        });
        expect(await rm.users.get('u1')).toBeNull();
        expect(await rm.users.getByLogin('alice')).toBeNull();
        expect(await rm.users.count()).toBe(2);
        expect(await rm.tokens.get('h1')).toBeNull();
        expect((await rm.tokens.get('h2'))?.userId).toBe('u2');
      });

      it('stores, finds and deletes tokens, also by API key', async () => {
        await apply((tx) => {
          tx.tokens.put({ hash: 'h1', userId: 'u1', scope: ['core.user_auth'], created: T0, expires: T1 });
          tx.tokens.put({ hash: 'h2', userId: 'u1', scope: [], created: T0, expires: T1, apiKeyId: 'k1' });
          tx.tokens.put({ hash: 'h3', userId: 'u2', scope: [], created: T0, expires: T1, apiKeyId: 'k1' });
        });
        expect(await rm.tokens.get('h1')).toEqual({
          hash: 'h1',
          userId: 'u1',
          scope: ['core.user_auth'],
          created: T0,
          expires: T1,
        });
        await apply((tx) => tx.tokens.deleteForApiKey('k1'));
        expect(await rm.tokens.get('h2')).toBeNull();
        expect(await rm.tokens.get('h3')).toBeNull();
        await apply((tx) => tx.tokens.delete('h1'));
        expect(await rm.tokens.get('h1')).toBeNull();
      });

      it('stores, lists and deletes API keys', async () => {
        const key = (id: string, name: string, userId = 'u1'): ApiKeyDoc => ({
          _id: id,
          userId,
          name,
          key: `key-${id}`,
          scope: null,
          tokenDuration: null,
          active: true,
          created: T0,
          lastUse: null,
        });
        await apply((tx) => {
          tx.apiKeys.put(key('k2', 'beta'));
          tx.apiKeys.put(key('k1', 'alpha'));
          tx.apiKeys.put(key('k3', 'gamma', 'u2'));
        });
        expect(await rm.apiKeys.get('k1')).toEqual(key('k1', 'alpha'));
        expect((await rm.apiKeys.getByKey('key-k2'))?._id).toBe('k2');
        const listed = await rm.apiKeys.listForUser('u1', paging({ sort: 'name' }));
        expect(ids(listed.rows)).toEqual(['k1', 'k2']);
        expect(listed.total).toBe(2);
        await apply((tx) => tx.apiKeys.delete('k1'));
        expect(await rm.apiKeys.get('k1')).toBeNull();
      });
    });

    describe('collections', () => {
      beforeEach(async () => {
        await apply((tx) => {
          tx.collections.put(collection('c1', 'Public things', { public: true, description: 'open to all' }));
          tx.collections.put(collection('c2', 'Private things', { access: acl([['u1', 0]]) }));
          tx.collections.put(
            collection('c3', 'Group things', { access: acl([], [['g1', 1]]), description: 'for the group' }),
          );
        });
      });

      it('lists what the viewer may read, inside the query', async () => {
        const list = async (v: Viewer | null) =>
          ids((await rm.collections.list({ viewer: v, paging: paging({ sort: 'name' }) })).rows);
        expect(await list(null)).toEqual(['c1']);
        expect(await list(viewer('u1'))).toEqual(['c2', 'c1']);
        expect(await list(viewer('u2', ['g1']))).toEqual(['c3', 'c1']);
        expect(await list(ADMIN)).toEqual(['c3', 'c2', 'c1']);
        const total = await rm.collections.list({ viewer: ADMIN, paging: paging({ limit: 1 }) });
        expect(total.rows).toHaveLength(1);
        expect(total.total).toBe(3);
      });

      it('searches names and descriptions', async () => {
        const search = async (text: string, v: Viewer | null = ADMIN) =>
          ids((await rm.collections.list({ viewer: v, text, paging: paging({ sort: 'name' }) })).rows);
        expect(await search('things')).toEqual(['c3', 'c2', 'c1']);
        expect(await search('group')).toEqual(['c3']);
        expect(await search('group', null)).toEqual([]);
        expect(await search('"open to"')).toEqual(['c1']);
        expect(await search('things -private -group')).toEqual(['c1']);
        expect(await search('!!!')).toEqual([]);
      });

      it('updates fields keeping the size, and deletes', async () => {
        await apply((tx) => tx.collections.addSize('c1', 42));
        await apply((tx) => tx.collections.update('c1', { name: 'Renamed', updated: T1 }));
        const c1 = await rm.collections.get('c1');
        expect(c1).toMatchObject({ name: 'Renamed', updated: T1, size: 42, description: 'open to all', public: true });
        expect((await rm.collections.getByName('Renamed'))?._id).toBe('c1');
        expect(await rm.collections.getByName('Public things')).toBeNull();
        await apply((tx) => tx.collections.delete('c1'));
        expect(await rm.collections.get('c1')).toBeNull();
      });
    });

    describe('folders', () => {
      beforeEach(async () => {
        await apply((tx) => {
          tx.users.put(user('u1', 'alice'));
          tx.collections.put(collection('c1', 'Col', { public: true }));
          tx.collections.put(collection('c2', 'Other'));
        });
        await apply((tx) =>
          tx.folders.insert(
            folder('a', 'Alpha', { type: 'collection', id: 'c1' }, { public: true, description: 'first letter' }),
          ),
        );
        await apply((tx) =>
          tx.folders.insert(folder('b', 'Beta', { type: 'folder', id: 'a' }, { access: acl([['u1', 2]]) })),
        );
        await apply((tx) =>
          tx.folders.insert(
            folder('c', 'Gamma', { type: 'folder', id: 'b' }, { access: acl([['u1', 0]], [['g1', 2]]) }),
          ),
        );
        await apply((tx) =>
          tx.folders.insert(folder('d', 'Delta', { type: 'folder', id: 'c' }, { access: acl([['u1', 2]]) })),
        );
        await apply((tx) =>
          tx.folders.insert(
            folder('e', 'Epsilon', { type: 'folder', id: 'b' }, { access: acl([['u1', 2]]), public: true }),
          ),
        );
      });

      it('derives the base parent and ancestry from the parent', async () => {
        const d = await rm.folders.get('d');
        expect(d).toMatchObject({
          _id: 'd',
          parentCollection: 'folder',
          parentId: 'c',
          baseParentType: 'collection',
          baseParentId: 'c1',
          lowerName: 'delta',
        });
        expect(d).not.toHaveProperty('ancestors');
        expect(await rm.folders.ancestorIds('d')).toEqual(['a', 'b', 'c']);
        expect(await rm.folders.ancestorIds('a')).toEqual([]);
        expect(await rm.folders.isSelfOrDescendant('a', 'd')).toBe(true);
        expect(await rm.folders.isSelfOrDescendant('d', 'd')).toBe(true);
        expect(await rm.folders.isSelfOrDescendant('d', 'a')).toBe(false);
        expect(ids(await rm.folders.getMany(['e', 'nope', 'a']))).toEqual(['e', 'a']);
      });

      it('lists permitted children with name and text filters, and counts them', async () => {
        const children = async (v: Viewer | null, o: { name?: string; text?: string } = {}) =>
          ids(
            (await rm.folders.listChildren({ parentType: 'folder', parentId: 'b', viewer: v, paging: paging(), ...o }))
              .rows,
          );
        expect(await children(null)).toEqual(['e']);
        expect(await children(viewer('u1'))).toEqual(['e', 'c']);
        expect(await children(viewer('u2', ['g1']))).toEqual(['e', 'c']);
        expect(await children(viewer('u2'))).toEqual(['e']);
        expect(await children(ADMIN, { name: 'Gamma' })).toEqual(['c']);
        expect(await children(ADMIN, { name: 'gamma' })).toEqual([]);
        expect(await children(ADMIN, { text: 'epsilon' })).toEqual(['e']);
        expect(await rm.folders.countChildren({ parentType: 'folder', parentId: 'b', viewer: null })).toBe(1);
        expect(await rm.folders.countChildren({ parentType: 'folder', parentId: 'b', viewer: ADMIN })).toBe(2);
        expect((await rm.folders.childNamed('folder', 'b', 'Gamma'))?._id).toBe('c');
        expect(await rm.folders.childNamed('folder', 'b', 'gamma')).toBeNull();
        expect(await rm.folders.childNamed('collection', 'b', 'Gamma')).toBeNull();
      });

      it("counts the permitted children and search hits before a folder in the listing's order", async () => {
        const position = (v: Viewer | null, id: string, o: { name?: string; sort?: string; sortdir?: 1 | -1 } = {}) =>
          rm.folders.positionInChildren({
            parentType: 'folder',
            parentId: 'b',
            viewer: v,
            ...(o.name !== undefined ? { name: o.name } : {}),
            paging: paging({ ...(o.sort ? { sort: o.sort } : {}), ...(o.sortdir ? { sortdir: o.sortdir } : {}) }),
            id,
          });
        // b's children by lowerName: e (epsilon, public), c (gamma, u1 and g1 only).
        expect(await position(ADMIN, 'e')).toBe(0);
        expect(await position(ADMIN, 'c')).toBe(1);
        expect(await position(ADMIN, 'c', { sortdir: -1 })).toBe(0);
        expect(await position(ADMIN, 'c', { sort: '_id' })).toBe(0);
        expect(await position(ADMIN, 'e', { sort: '_id' })).toBe(1);
        expect(await position(ADMIN, 'c', { name: 'Gamma' })).toBe(0);
        expect(await position(null, 'c')).toBe(1);
        expect(await position(viewer('u2'), 'e', { sortdir: -1 })).toBe(0);
        expect(await position(ADMIN, 'nope')).toBe(0);
        const hit = (v: Viewer | null, id: string) =>
          rm.folders.positionInSearch({ text: 'epsilon gamma', viewer: v, paging: paging(), id });
        expect(await hit(ADMIN, 'c')).toBe(1);
        expect(await hit(null, 'c')).toBe(1);
        expect(await hit(ADMIN, 'e')).toBe(0);
      });

      it("lists a partial reader's children in order, page by page, whatever ACLs the others hold", async () => {
        // Two ACLs whose read-class keys share a 32-bit hash (the embedded index's key, readClassIndex.ts): one that
        // u1 reads, one that u1 does not.
        const readable = acl([
          ['u1', 0],
          ['25e7aa8f', 2],
        ]);
        const unreadable = acl([['cba8ad71', 2]]);
        const classes = [
          readable,
          unreadable,
          acl([['u2', 2]]),
          acl([], [['g1', 0]]),
          acl([
            ['u2', 2],
            ['u1', 1],
          ]),
        ];
        // Twenty children, their classes interleaved in name order; every fifth one public as well.
        await apply((tx) => {
          tx.folders.insert(folder('kids', 'Kids', { type: 'collection', id: 'c1' }));
          for (let n = 0; n < 20; n++) {
            const access = classes[(n * 3) % classes.length];
            tx.folders.insert(
              folder(
                `k${n}`,
                `Kid ${String(n).padStart(2, '0')}`,
                { type: 'folder', id: 'kids' },
                {
                  access,
                  public: n % 5 === 4,
                },
              ),
            );
          }
        });
        const reads = (v: Viewer, n: number) => {
          const access = classes[(n * 3) % classes.length];
          return (
            n % 5 === 4 ||
            access.users.some((entry) => entry.id === v.id) ||
            access.groups.some((entry) => v.groups.includes(entry.id))
          );
        };
        const kids = Array.from({ length: 20 }, (_, n) => n);
        for (const v of [viewer('u1'), viewer('u1', ['g1']), viewer('u2'), viewer('u3')]) {
          const expected = kids.filter((n) => reads(v, n)).map((n) => `k${n}`);
          for (const sortdir of [1, -1] as const) {
            const inOrder = sortdir === 1 ? expected : [...expected].reverse();
            const pages: string[] = [];
            for (let offset = 0; offset < inOrder.length + 3; offset += 3) {
              const page = await rm.folders.listChildren({
                parentType: 'folder',
                parentId: 'kids',
                viewer: v,
                paging: paging({ limit: 3, offset, sortdir }),
              });
              expect(page.total).toBe(expected.length);
              pages.push(...ids(page.rows));
            }
            expect(pages).toEqual(inOrder);
          }
        }
      });

      it('sorts on any field, missing values first, ties by id', async () => {
        await apply((tx) => tx.folders.update('c', { meta: { rank: 2 } }));
        await apply((tx) => tx.folders.update('e', { meta: { rank: 1 } }));
        const sorted = async (sort: string, sortdir: 1 | -1 = 1) =>
          ids(
            (
              await rm.folders.listChildren({
                parentType: 'folder',
                parentId: 'b',
                viewer: ADMIN,
                paging: paging({ sort, sortdir }),
              })
            ).rows,
          );
        expect(await sorted('meta.rank')).toEqual(['e', 'c']);
        expect(await sorted('meta.rank', -1)).toEqual(['c', 'e']);
        expect(await sorted('no.such.field')).toEqual(['c', 'e']);
        expect(await sorted('_id', -1)).toEqual(['e', 'c']);
      });

      it('searches globally with scores, permission filtered', async () => {
        await apply((tx) =>
          tx.folders.insert(
            folder('x', 'Letters', { type: 'collection', id: 'c1' }, { public: true, description: 'alpha beta' }),
          ),
        );
        const res = await rm.folders.search({ text: 'alpha', viewer: null, paging: paging({ sort: 'name' }) });
        expect(ids(res.rows)).toEqual(['a', 'x']);
        expect(res.total).toBe(2);
        const [alpha, letters] = res.rows;
        expect(alpha._textScore).toBeGreaterThan(letters._textScore);
        expect(letters._textScore).toBeGreaterThan(0);
        expect(ids((await rm.folders.search({ text: 'gamma', viewer: null, paging: paging() })).rows)).toEqual([]);
        expect(ids((await rm.folders.search({ text: 'gamma', viewer: viewer('u1'), paging: paging() })).rows)).toEqual([
          'c',
        ]);
        expect(ids((await rm.folders.search({ text: 'LETTER', viewer: null, paging: paging() })).rows)).toEqual([
          'a',
          'x',
        ]);
        const paged = await rm.folders.search({
          text: 'alpha',
          viewer: null,
          paging: paging({ sort: 'name', limit: 1, offset: 1 }),
        });
        expect(ids(paged.rows)).toEqual(['x']);
        expect(paged.total).toBe(2);
      });

      it('updates fields (a rename changes lowerName and the search)', async () => {
        await apply((tx) =>
          tx.folders.update('e', { name: 'Zeta', lowerName: 'zeta', description: 'last', updated: T1 }),
        );
        expect(await rm.folders.get('e')).toMatchObject({
          name: 'Zeta',
          lowerName: 'zeta',
          description: 'last',
          updated: T1,
        });
        expect(ids((await rm.folders.search({ text: 'epsilon', viewer: ADMIN, paging: paging() })).rows)).toEqual([]);
        expect(ids((await rm.folders.search({ text: 'zeta', viewer: ADMIN, paging: paging() })).rows)).toEqual(['e']);
      });

      it('moves a subtree to another root, carrying ancestry, base parents, items and sizes', async () => {
        await apply((tx) => tx.items.insert(item('i1', 'Thing', 'd')));
        await apply((tx) => {
          tx.files.insert(file('x1', 'i1', 100, 'a'.repeat(64)));
          tx.items.addSize('i1', 100);
        });
        expect((await rm.collections.get('c1'))?.size).toBe(100);
        await apply((tx) => tx.folders.move('b', 'collection', 'c2', T1));
        expect(await rm.folders.get('b')).toMatchObject({
          parentCollection: 'collection',
          parentId: 'c2',
          baseParentId: 'c2',
          updated: T1,
        });
        expect(await rm.folders.ancestorIds('d')).toEqual(['b', 'c']);
        expect((await rm.folders.get('d'))?.baseParentId).toBe('c2');
        expect((await rm.items.get('i1'))?.baseParentId).toBe('c2');
        expect((await rm.collections.get('c1'))?.size).toBe(0);
        expect((await rm.collections.get('c2'))?.size).toBe(100);
        expect(await rm.folders.isSelfOrDescendant('a', 'd')).toBe(false);
        // And back under a folder of the first collection.
        await apply((tx) => tx.folders.move('c', 'folder', 'a', T1));
        expect(await rm.folders.ancestorIds('d')).toEqual(['a', 'c']);
        expect((await rm.collections.get('c1'))?.size).toBe(100);
        expect((await rm.collections.get('c2'))?.size).toBe(0);
      });

      it('applies access recursively where the actor holds ADMIN, and reports the folders reached', async () => {
        const actor = viewer('u1');
        // The generic set-wise steps the rule is built from (src/projections/folderAccess.ts)…
        expect((await rm.folders.idsUnder('b')).sort()).toEqual(['c', 'd', 'e']);
        expect(await rm.folders.idsUnder('b', { lacking: { viewer: actor, level: 2 } })).toEqual(['c']);
        expect(
          (await rm.folders.idsUnder('b', { lacking: { viewer: viewer('u2', ['g1']), level: 2 } })).sort(),
        ).toEqual(['d', 'e']);
        expect(await rm.folders.idsUnder('b', { lacking: { viewer: ADMIN, level: 2 } })).toEqual([]);
        expect(await rm.folders.idsUnder('b', { outside: ['c'] })).toEqual(['e']);
        expect(await rm.folders.idsUnder('d')).toEqual([]);
        // …and the rule over them, on the queries role and on the reads a projection's plan makes.
        expect((await accessTargets(rm.folders, 'b', actor)).length).toBe(2); // b and e; c denies ADMIN, so d is cut off
        expect((await accessTargets(rm.folders, 'b', ADMIN)).length).toBe(4);
        expect((await accessTargets(rm.folders, 'nope', ADMIN)).length).toBe(0);
        const access = acl([
          ['u1', 2],
          ['u9', 0],
        ]);
        const reached = await accessTargets(rm.projectionReads.folders, 'b', actor);
        await apply((tx) => {
          tx.subtree.recordOps(reached, position, 'accessChanged', 'b');
          tx.folders.setAccess(reached, { access, public: true });
        });
        expect([...reached].sort()).toEqual(['b', 'e']);
        expect(await rm.folders.get('b')).toMatchObject({ access, public: true });
        expect(await rm.folders.get('e')).toMatchObject({ access, public: true });
        expect((await rm.folders.get('c'))?.access).toEqual(acl([['u1', 0]], [['g1', 2]]));
        expect(await rm.folders.get('d')).toMatchObject({ access: acl([['u1', 2]]), public: false });
        expect((await rm.subtree.subtreeOpsFor('e')).map((o) => [o.operation, o.rootId])).toEqual([
          ['accessChanged', 'b'],
        ]);
        expect(await rm.subtree.subtreeOpsFor('d')).toEqual([]);
        expect(
          ids(
            (
              await rm.folders.listChildren({
                parentType: 'folder',
                parentId: 'b',
                viewer: viewer('u9'),
                paging: paging(),
              })
            ).rows,
          ),
        ).toEqual(['e']);
      });

      it('deletes single folders and everything under a root', async () => {
        await apply((tx) => tx.folders.delete('e'));
        expect(await rm.folders.get('e')).toBeNull();
        await apply((tx) => tx.folders.insert(folder('z', 'Other root', { type: 'collection', id: 'c2' })));
        await apply((tx) => tx.folders.deleteUnderRoot('c1'));
        expect(await rm.folders.getMany(['a', 'b', 'c', 'd', 'z'])).toHaveLength(1);
      });

      it('skips writes naming folders a subtree delete removed earlier', async () => {
        await apply((tx) => tx.subtree.deleteFolder('c', position));
        expect(await rm.folders.get('c')).toBeNull();
        expect(await rm.folders.get('d')).toBeNull();
        await apply((tx) =>
          createUnder(tx, 'folder', 'c', (tx) =>
            tx.folders.insert(folder('late', 'Late', { type: 'folder', id: 'c' })),
          ),
        );
        await apply((tx) => changeOf(tx, folderRow('d'), (tx) => tx.folders.update('d', { name: 'Ghost' })));
        expect(await rm.folders.get('late')).toBeNull();
        expect(await rm.folders.get('d')).toBeNull();
        await apply((tx) => moveFolder(tx, 'e', { parentType: 'folder', parentId: 'c' }));
        expect(await rm.folders.get('e')).toBeNull();
      });
    });

    describe('what a projection plans with (the projection-writes role)', () => {
      it('reads the state its writes go to: folders under a folder, and whether a folder or parent is still there', async () => {
        await apply((tx) => {
          tx.users.put(user('u1', 'alice'));
          tx.collections.put(collection('c1', 'Col'));
        });
        await apply((tx) => tx.folders.insert(folder('a', 'A', { type: 'collection', id: 'c1' })));
        await apply((tx) => tx.folders.insert(folder('b', 'B', { type: 'folder', id: 'a' })));
        const reads = rm.projectionReads;
        expect(await reads.folders.idsUnder('a')).toEqual(['b']);
        expect([
          await folderPresent(reads, 'a'),
          await parentPresent(reads, 'collection', 'c1'),
          await parentPresent(reads, 'user', 'u1'),
        ]).toEqual([true, true, true]);
        await apply((tx) => tx.subtree.deleteFolder('a', position));
        expect([
          await folderPresent(reads, 'b'),
          await parentPresent(reads, 'folder', 'a'),
          await parentPresent(reads, 'user', 'u2'),
        ]).toEqual([false, false, false]);
        expect(await reads.folders.idsUnder('a')).toEqual([]);
      });
    });

    describe('items and files', () => {
      beforeEach(async () => {
        await apply((tx) => {
          tx.users.put(user('u1', 'alice'));
          tx.collections.put(collection('c1', 'Col'));
        });
        await apply((tx) =>
          tx.folders.insert(folder('pub', 'Public', { type: 'collection', id: 'c1' }, { public: true })),
        );
        await apply((tx) =>
          tx.folders.insert(folder('priv', 'Private', { type: 'user', id: 'u1' }, { access: acl([['u1', 2]]) })),
        );
        await apply((tx) => {
          tx.items.insert(item('i1', 'Apple pie', 'pub', { description: 'baked apples' }));
          tx.items.insert(item('i2', 'Banana', 'pub'));
          tx.items.insert(item('i3', 'Apple secret', 'priv'));
          createUnder(tx, 'folder', 'no-such-folder', (tx) =>
            tx.items.insert(item('ghost', 'Ghost', 'no-such-folder')),
          );
        });
        await apply((tx) => {
          tx.files.insert(file('f1', 'i1', 10, '1'.repeat(64)));
          tx.items.addSize('i1', 10);
          tx.files.insert(file('f2', 'i1', 5, '2'.repeat(64)));
          tx.items.addSize('i1', 5);
          tx.files.insert(file('f3', 'i3', 20, '1'.repeat(64)));
          tx.items.addSize('i3', 20);
          changeOf(tx, itemRow('ghost'), (tx) => tx.files.insert(file('f4', 'ghost', 1, '3'.repeat(64))));
        });
      });

      it('derives base parents, skips orphans and keeps sizes on items, folders and roots', async () => {
        expect(await rm.items.get('i1')).toMatchObject({
          folderId: 'pub',
          baseParentType: 'collection',
          baseParentId: 'c1',
          size: 15,
          lowerName: 'apple pie',
        });
        expect(await rm.items.get('ghost')).toBeNull();
        expect(await rm.files.get('f4')).toBeNull();
        expect((await rm.folders.get('pub'))?.size).toBe(15);
        expect((await rm.folders.get('priv'))?.size).toBe(20);
        expect((await rm.collections.get('c1'))?.size).toBe(15);
        expect((await rm.users.get('u1'))?.size).toBe(20);
        expect(await rm.items.countInFolder('pub')).toBe(2);
        expect(await rm.folders.itemCount('pub')).toBe(2);
        expect(await rm.files.get('f1')).toEqual(file('f1', 'i1', 10, '1'.repeat(64)));
      });

      it("lists an assetstore's files by their blob references, the default store's bare ones included", async () => {
        const other = blobRefsOf('0123456789abcdef01234567');
        await apply((tx) => {
          tx.files.insert(file('s1', 'i2', 4, `${other.prefix}${'5'.repeat(64)}`));
          tx.files.insert(file('s2', 'i2', 6, `${other.prefix}imported:/data/x.bin`));
          tx.files.insert(file('d1', 'i2', 1, `${DEFAULT_ASSETSTORE_ID}:imported:/data/y.bin`));
          // A reference of a store whose id sorts right after the other's must not be taken for one of its.
          tx.files.insert(file('n1', 'i2', 1, `0123456789abcdef01234568:${'6'.repeat(64)}`));
        });
        const byId = { ...paging(), sort: '_id' };
        expect(ids((await rm.files.listInAssetstore(other, byId)).rows)).toEqual(['s1', 's2']);
        expect((await rm.files.listInAssetstore(other, byId)).total).toBe(2);
        const defaults = await rm.files.listInAssetstore(blobRefsOf(DEFAULT_ASSETSTORE_ID), byId);
        expect(ids(defaults.rows)).toEqual(['d1', 'f1', 'f2', 'f3']);
        expect(await rm.files.anyInAssetstore(other)).toBe(true);
        expect(await rm.files.anyInAssetstore(blobRefsOf('0123456789abcdef01234569'))).toBe(false);
      });

      it('says what holds a name among the children of a parent: a folder first, then an item', async () => {
        await apply((tx) => tx.folders.insert(folder('sub', 'Banana', { type: 'folder', id: 'priv' })));
        await apply((tx) => tx.items.insert(item('i4', 'Banana', 'priv')));
        expect(await rm.folders.siblingNamed('folder', 'pub', 'Banana')).toBe('item');
        expect(await rm.folders.siblingNamed('folder', 'pub', 'banana')).toBeNull();
        expect(await rm.folders.siblingNamed('folder', 'pub', 'Banana', 'i2')).toBeNull();
        expect(await rm.folders.siblingNamed('folder', 'pub', 'Banana', 'i1')).toBe('item');
        expect(await rm.folders.siblingNamed('folder', 'priv', 'Banana')).toBe('folder');
        expect(await rm.folders.siblingNamed('folder', 'priv', 'Banana', 'i4')).toBe('folder');
        expect(await rm.folders.siblingNamed('collection', 'c1', 'Public')).toBe('folder');
        expect(await rm.folders.siblingNamed('collection', 'c1', 'Apple pie')).toBeNull();
        expect(await rm.folders.siblingNamed('user', 'u1', 'Private')).toBe('folder');
        expect(await rm.folders.siblingNamed('collection', 'pub', 'Banana')).toBeNull();
      });

      it('lists items of a folder by name and text, and searches where the folder is readable', async () => {
        expect(ids((await rm.items.listInFolder({ folderId: 'pub', paging: paging() })).rows)).toEqual(['i1', 'i2']);
        expect(ids((await rm.items.listInFolder({ folderId: 'pub', name: 'Banana', paging: paging() })).rows)).toEqual([
          'i2',
        ]);
        expect(ids((await rm.items.listInFolder({ folderId: 'pub', text: 'apples', paging: paging() })).rows)).toEqual([
          'i1',
        ]);
        // Exact, case-sensitive, in that folder only; `except` leaves the item itself out (renaming to its own name).
        expect(await rm.items.namedInFolder('pub', 'Banana')).toBe('i2');
        expect(await rm.items.namedInFolder('pub', 'banana')).toBeNull();
        expect(await rm.items.namedInFolder('priv', 'Banana')).toBeNull();
        expect(await rm.items.namedInFolder('pub', 'Banana', 'i2')).toBeNull();
        expect(await rm.items.namedInFolder('pub', 'Banana', 'i1')).toBe('i2');
        const search = async (v: Viewer | null) =>
          ids((await rm.items.search({ text: 'apple', viewer: v, paging: paging() })).rows);
        expect(await search(null)).toEqual(['i1']);
        expect(await search(viewer('u1'))).toEqual(['i1', 'i3']);
        expect(await search(viewer('u2'))).toEqual(['i1']);
        const paged = await rm.items.search({
          text: 'apple',
          viewer: ADMIN,
          paging: paging({ limit: 1, sortdir: -1 }),
        });
        expect(ids(paged.rows)).toEqual(['i3']);
        expect(paged.total).toBe(2);
      });

      it("counts the items and search hits before an item in the listing's order", async () => {
        const position = (id: string, o: { name?: string; sortdir?: 1 | -1 } = {}) =>
          rm.items.positionInFolder({
            folderId: 'pub',
            ...(o.name !== undefined ? { name: o.name } : {}),
            paging: paging(o.sortdir ? { sortdir: o.sortdir } : {}),
            id,
          });
        expect(await position('i1')).toBe(0);
        expect(await position('i2')).toBe(1);
        expect(await position('i2', { sortdir: -1 })).toBe(0);
        expect(await position('i2', { name: 'Banana' })).toBe(0);
        const hit = async (v: Viewer | null, id: string, sortdir: 1 | -1 = 1) =>
          rm.items.positionInSearch({ text: 'apple', viewer: v, paging: paging({ sortdir }), id });
        expect(await hit(ADMIN, 'i1')).toBe(0);
        expect(await hit(ADMIN, 'i3')).toBe(1);
        expect(await hit(ADMIN, 'i1', -1)).toBe(1);
        expect(await hit(null, 'i3')).toBe(1);
        expect(await hit(viewer('u2'), 'i3')).toBe(1);
      });

      it('moves items (sizes follow), renames, updates and deletes them', async () => {
        await apply((tx) => tx.items.move('i1', 'priv', 'Moved pie', T1));
        expect(await rm.items.get('i1')).toMatchObject({
          folderId: 'priv',
          name: 'Moved pie',
          lowerName: 'moved pie',
          baseParentType: 'user',
          updated: T1,
        });
        expect((await rm.folders.get('pub'))?.size).toBe(0);
        expect((await rm.folders.get('priv'))?.size).toBe(35);
        expect((await rm.collections.get('c1'))?.size).toBe(0);
        expect((await rm.users.get('u1'))?.size).toBe(35);
        await apply((tx) => tx.items.update('i1', { description: 'new', meta: { a: 1 }, updated: T1 }));
        expect(await rm.items.get('i1')).toMatchObject({ description: 'new', meta: { a: 1 } });
        await apply((tx) => tx.items.delete('i1'));
        expect(await rm.items.get('i1')).toBeNull();
        expect(await rm.files.get('f1')).toBeNull();
        expect((await rm.users.get('u1'))?.size).toBe(20);
        expect((await rm.folders.get('priv'))?.size).toBe(20);
      });

      it('deletes the items of a folder and under a root', async () => {
        await apply((tx) => tx.items.deleteInFolder('pub'));
        expect(await rm.items.countInFolder('pub')).toBe(0);
        expect((await rm.folders.get('pub'))?.size).toBe(0);
        expect((await rm.collections.get('c1'))?.size).toBe(0);
        expect(await rm.files.isBlobReferenced('2'.repeat(64))).toBe(false);
        expect(await rm.files.isBlobReferenced('1'.repeat(64))).toBe(true);
        await apply((tx) => tx.items.deleteUnderRoot('u1'));
        expect(await rm.items.get('i3')).toBeNull();
        expect(await rm.files.isBlobReferenced('1'.repeat(64))).toBe(false);
      });

      it('updates and deletes files, and reports the blobs they reference', async () => {
        await apply((tx) => {
          tx.files.update('f2', { name: 'notes.TAR.GZ', blobId: '4'.repeat(64), size: 8 });
          tx.items.addSize('i1', 3);
        });
        expect(await rm.files.get('f2')).toMatchObject({
          name: 'notes.TAR.GZ',
          exts: ['tar', 'gz'],
          size: 8,
          blobId: '4'.repeat(64),
        });
        expect((await rm.items.get('i1'))?.size).toBe(18);
        const listed = await rm.files.listForItem('i1', paging({ sort: 'name' }));
        expect(ids(listed.rows)).toEqual(['f1', 'f2']);
        expect((await rm.files.blobIdsInFolders(['pub'])).sort()).toEqual(['1'.repeat(64), '4'.repeat(64)]);
        expect(await rm.files.blobIdsUnderRoot('u1')).toEqual(['1'.repeat(64)]);
        await apply((tx) => tx.files.delete('f2'));
        expect(await rm.files.get('f2')).toBeNull();
        expect(await rm.files.isBlobReferenced('4'.repeat(64))).toBe(false);
      });

      it('finds files by SHA-512 where their folder is readable, by id; new bytes without one drop it', async () => {
        const [h1, h2] = ['d'.repeat(128), 'e'.repeat(128)];
        await apply((tx) => {
          tx.files.update('f3', { sha512: h1 });
          tx.files.update('f1', { sha512: h1 });
          tx.files.update('f2', { sha512: h2 });
        });
        expect(await rm.files.get('f1')).toEqual(file('f1', 'i1', 10, '1'.repeat(64), { sha512: h1 }));
        expect(ids(await rm.files.withSha512(h1, ADMIN))).toEqual(['f1', 'f3']);
        expect(ids(await rm.files.withSha512(h1, viewer('u1')))).toEqual(['f1', 'f3']);
        expect(ids(await rm.files.withSha512(h1, viewer('u2')))).toEqual(['f1']);
        expect(ids(await rm.files.withSha512(h1, null))).toEqual(['f1']);
        expect(ids(await rm.files.withSha512(h1, viewer('u1'), 1))).toEqual(['f1']);
        expect(ids(await rm.files.withSha512(h2, null))).toEqual(['f2']);
        expect(await rm.files.withSha512('f'.repeat(128), ADMIN)).toEqual([]);
        // FileContentsReplaced from before hashes were kept: the old bytes' hash goes.
        await apply((tx) => tx.files.update('f1', { blobId: '5'.repeat(64), sha512: undefined }));
        expect(await rm.files.get('f1')).not.toHaveProperty('sha512');
        expect(ids(await rm.files.withSha512(h1, ADMIN))).toEqual(['f3']);
      });
    });

    describe('subtree operations', () => {
      beforeEach(async () => {
        await apply((tx) => {
          tx.users.put(user('u1', 'alice'));
          tx.collections.put(collection('c1', 'Col'));
        });
        await apply((tx) =>
          tx.folders.insert(folder('r', 'Root', { type: 'collection', id: 'c1' }, { access: acl([['u1', 2]]) })),
        );
        await apply((tx) =>
          tx.folders.insert(
            folder('s', 'Seen', { type: 'folder', id: 'r' }, { access: acl([['u1', 0]]), publicFlags: ['x'] }),
          ),
        );
        await apply((tx) => tx.folders.insert(folder('h', 'Hidden', { type: 'folder', id: 'r' }, { meta: { k: 1 } })));
        await apply((tx) =>
          tx.folders.insert(folder('hs', 'Under hidden', { type: 'folder', id: 'h' }, { access: acl([['u1', 2]]) })),
        );
        await apply((tx) => {
          tx.items.insert(item('ir', 'At root', 'r'));
          tx.items.insert(item('is', 'In seen', 's'));
          tx.items.insert(item('ih', 'In hidden', 'h'));
        });
        await apply((tx) => {
          tx.files.insert(file('fr', 'ir', 1, 'a'.repeat(64)));
          tx.items.addSize('ir', 1);
          tx.files.insert(file('fs', 'is', 2, 'b'.repeat(64)));
          tx.items.addSize('is', 2);
          tx.files.insert(file('fh', 'ih', 4, 'c'.repeat(64)));
          tx.items.addSize('ih', 4);
        });
      });

      it('counts subtrees and lists their blobs', async () => {
        expect(await rm.subtree.subtreeCount('r')).toBe(4 + 3);
        expect(await rm.subtree.subtreeCount('h')).toBe(2 + 1);
        expect(await rm.subtree.subtreeCount('nope')).toBe(0);
        expect((await rm.subtree.blobIdsInSubtree('r')).sort()).toEqual([
          'a'.repeat(64),
          'b'.repeat(64),
          'c'.repeat(64),
        ]);
        expect(await rm.subtree.blobIdsInSubtree('s')).toEqual(['b'.repeat(64)]);
      });

      it('counts a subtree wider and deeper than one chunk of its walk (1,200 children, a chain 600 deep)', async () => {
        await apply((tx) => {
          for (let i = 0; i < 1200; i++) tx.folders.insert(folder(`w${i}`, `wide ${i}`, { type: 'folder', id: 'hs' }));
          for (let i = 0; i < 600; i++)
            tx.folders.insert(folder(`d${i}`, `deep ${i}`, { type: 'folder', id: i === 0 ? 'w7' : `d${i - 1}` }));
        });
        expect(await rm.subtree.subtreeCount('h')).toBe(2 + 1 + 1200 + 600);
        expect(await rm.subtree.subtreeCount('w7')).toBe(1 + 600);
        expect((await rm.subtree.blobIdsInSubtree('h')).sort()).toEqual(['c'.repeat(64)]);
      });

      it('deletes a subtree with its items and files, the root losing its size', async () => {
        expect((await rm.collections.get('c1'))?.size).toBe(7);
        let at = 0n;
        await apply((tx) => tx.subtree.deleteFolder('h', (at = position)));
        expect(await rm.folders.getMany(['h', 'hs'])).toEqual([]);
        expect(await rm.items.get('ih')).toBeNull();
        expect(await rm.files.get('fh')).toBeNull();
        expect((await rm.collections.get('c1'))?.size).toBe(3);
        expect((await rm.folders.get('r'))?.size).toBe(1);
        expect(await rm.subtree.subtreeOpsFor('hs')).toEqual([
          { folderId: 'hs', position: at, operation: 'deleted', rootId: 'h' },
        ]);
        expect(await rm.subtree.subtreeOpsFor('h')).toEqual([
          { folderId: 'h', position: at, operation: 'deleted', rootId: 'h' },
        ]);
      });

      it('empties a folder, which stays with size 0', async () => {
        let at = 0n;
        await apply((tx) => tx.subtree.clearContents('r', (at = position)));
        expect(await rm.folders.get('r')).toMatchObject({ size: 0, updated: T0 });
        expect(await rm.folders.getMany(['s', 'h', 'hs'])).toEqual([]);
        expect(await rm.items.get('ir')).toBeNull();
        expect((await rm.collections.get('c1'))?.size).toBe(0);
        expect(await rm.subtree.subtreeOpsFor('r')).toEqual([
          { folderId: 'r', position: at, operation: 'cleared', rootId: 'r' },
        ]);
        expect(await rm.subtree.subtreeCount('r')).toBe(1);
      });

      it('copies what the copier may read, with derived ids, shared blobs, sizes and history', async () => {
        const copier = viewer('u1');
        let at = 0n;
        await apply((tx) =>
          tx.folders.insert(folder('dest', 'Dest', { type: 'user', id: 'u1' }, { access: acl([['u1', 2]]) })),
        );
        await apply((tx) =>
          tx.subtree.copyFolder(
            {
              opId: '65a0000000000000000000aa',
              sourceId: 'r',
              folderId: 'copy',
              parentType: 'folder',
              parentId: 'dest',
              name: 'Copy',
              description: 'copied',
              access: acl([['u1', 2]]),
              creatorId: 'u1',
              created: T1,
              meta: { m: 1 },
              copier,
            },
            (at = position),
          ),
        );
        const op = '65a0000000000000000000aa';
        const sCopy = deriveId(op, 's');
        expect(await rm.folders.get('copy')).toMatchObject({
          name: 'Copy',
          description: 'copied',
          parentId: 'dest',
          baseParentType: 'user',
          baseParentId: 'u1',
          size: 1,
          created: T1,
          meta: { m: 1 },
        });
        expect(await rm.folders.get(sCopy)).toMatchObject({
          name: 'Seen',
          parentId: 'copy',
          size: 2,
          public: false,
          publicFlags: ['x'],
          access: acl([['u1', 2]]),
          creatorId: 'u1',
          created: T1,
        });
        expect(await rm.folders.ancestorIds(sCopy)).toEqual(['dest', 'copy']);
        expect(await rm.folders.get(deriveId(op, 'h'))).toBeNull();
        expect(await rm.folders.get(deriveId(op, 'hs'))).toBeNull();
        const copiedItem = await rm.items.get(deriveId(op, 'is'));
        expect(copiedItem).toMatchObject({
          folderId: sCopy,
          copyOfItem: 'is',
          size: 2,
          baseParentId: 'u1',
          creatorId: 'u1',
          created: T1,
        });
        expect(await rm.files.get(deriveId(op, 'fs'))).toMatchObject({
          itemId: deriveId(op, 'is'),
          blobId: 'b'.repeat(64),
          copyOfFile: 'fs',
          copierId: 'u1',
          copied: T1,
        });
        expect((await rm.users.get('u1'))?.size).toBe(3);
        expect((await rm.collections.get('c1'))?.size).toBe(7);
        expect(await rm.subtree.subtreeOpsFor('s')).toEqual([
          { folderId: 's', position: at, operation: 'copiedFrom', rootId: 'copy' },
        ]);
        expect(await rm.subtree.subtreeOpsFor(sCopy)).toEqual([
          { folderId: sCopy, position: at, operation: 'copied', rootId: 'copy' },
        ]);
      });

      it('deletes everything rooted under a collection that goes away, and whatever lands there later', async () => {
        await apply((tx) => {
          tx.collections.put(collection('c2', 'Kept'));
          tx.folders.insert(folder('k', 'K', { type: 'collection', id: 'c2' }));
        });
        await apply((tx) => {
          tx.items.insert(item('ik', 'in k', 'k'));
          tx.files.insert(file('fk', 'ik', 8, 'b'.repeat(64)));
          tx.items.addSize('ik', 8);
        });
        const at = position + 1n;
        await apply((tx) => {
          tx.subtree.deleteUnderRoot('collection', 'c1', at);
          tx.collections.delete('c1');
        });
        expect(await rm.folders.getMany(['r', 's', 'h', 'hs', 'k'])).toHaveLength(1);
        expect([await rm.items.get('ir'), await rm.items.get('is'), await rm.files.get('fs')]).toEqual([
          null,
          null,
          null,
        ]);
        expect(await rm.files.isBlobReferenced('a'.repeat(64))).toBe(false);
        expect(await rm.files.isBlobReferenced('b'.repeat(64))).toBe(true);
        expect(await rm.files.blobIdsUnderRoot('c1')).toEqual([]);
        for (const id of ['r', 'hs'])
          expect(await rm.subtree.subtreeOpsFor(id)).toEqual([
            { folderId: id, position: at, operation: 'deleted', rootId: 'c1' },
          ]);
        expect(await rm.subtree.subtreeOpsFor('k')).toEqual([]);
        // Created or moved under the collection after its delete (in log order): gone with it.
        await apply((tx) =>
          createUnder(tx, 'collection', 'c1', (tx) =>
            tx.folders.insert(folder('late', 'Late', { type: 'collection', id: 'c1' })),
          ),
        );
        expect(await rm.folders.get('late')).toBeNull();
        await apply((tx) => moveFolder(tx, 'k', { parentType: 'collection', parentId: 'c1' }));
        expect(await rm.folders.get('k')).toBeNull();
        expect(await rm.items.get('ik')).toBeNull();
        expect((await rm.collections.get('c2'))?.size).toBe(0);
      });

      it('copies a folder into itself without copying the copy', async () => {
        await apply((tx) =>
          tx.subtree.copyFolder(
            {
              opId: '65a0000000000000000000bb',
              sourceId: 'r',
              folderId: 'inner',
              parentType: 'folder',
              parentId: 's',
              name: 'Inner',
              description: '',
              access: acl([['u1', 2]]),
              creatorId: 'u1',
              created: T1,
              meta: {},
              copier: ADMIN,
            },
            position,
          ),
        );
        expect(await rm.subtree.subtreeCount('inner')).toBe(4 + 3);
        expect(await rm.folders.ancestorIds(deriveId('65a0000000000000000000bb', 'hs'))).toEqual([
          'r',
          's',
          'inner',
          deriveId('65a0000000000000000000bb', 'h'),
        ]);
        expect((await rm.collections.get('c1'))?.size).toBe(14);
      });
    });

    describe('child folder totals (Girder-Total-Count) through every kind of folder write', () => {
      const VIEWERS = [null, viewer('u1'), viewer('u2', ['g1']), viewer('u3', ['g2']), ADMIN];
      const PARENTS: { parentType: 'folder' | 'user' | 'collection'; parentId: string }[] = [
        { parentType: 'collection', parentId: 'c1' },
        { parentType: 'user', parentId: 'u1' },
        ...['r', 's', 'h', 'dest', 'copy', 'x', 'home'].map((id) => ({ parentType: 'folder' as const, parentId: id })),
      ];
      /** Each parent's total for each viewer equals the rows the viewer's listing returns (the ACL filter). */
      const expectExactTotals = async (step: string) => {
        for (const parent of PARENTS)
          for (const v of VIEWERS) {
            const page = await rm.folders.listChildren({ ...parent, viewer: v, paging: paging() });
            const counted = await rm.folders.countChildren({ ...parent, viewer: v });
            expect({ step, parent, viewer: v?.id ?? null, total: page.total, counted }).toEqual({
              step,
              parent,
              viewer: v?.id ?? null,
              total: page.rows.length,
              counted: page.rows.length,
            });
          }
      };

      it('stay exact after creations, moves, access changes, copies, deletes, empties and restores', async () => {
        await apply((tx) => {
          tx.users.put(user('u1', 'alice'));
          tx.collections.put(collection('c1', 'Col'));
        });
        await apply((tx) => tx.folders.insert(folder('r', 'Root', { type: 'collection', id: 'c1' }, { public: true })));
        await apply((tx) => tx.folders.insert(folder('home', 'Home', { type: 'user', id: 'u1' })));
        await apply((tx) =>
          tx.folders.insert(folder('s', 'S', { type: 'folder', id: 'r' }, { access: acl([['u1', 2]]) })),
        );
        await apply((tx) =>
          tx.folders.insert(folder('h', 'H', { type: 'folder', id: 'r' }, { access: acl([], [['g1', 0]]) })),
        );
        await apply((tx) => tx.folders.insert(folder('hs', 'Hs', { type: 'folder', id: 'h' }, { public: true })));
        await apply((tx) =>
          tx.folders.insert(folder('ss', 'Ss', { type: 'folder', id: 's' }, { access: acl([['u1', 0]], [['g2', 1]]) })),
        );
        await apply((tx) => tx.folders.insert(folder('x', 'X', { type: 'folder', id: 'r' })));
        await expectExactTotals('created');

        await apply((tx) => moveFolder(tx, 'hs', { parentType: 'folder', parentId: 's' }));
        await apply((tx) => moveFolder(tx, 'x', { parentType: 'collection', parentId: 'c1' }));
        await expectExactTotals('moved');

        await apply((tx) => tx.folders.update('s', { access: acl([], [['g1', 1]]), public: false }));
        await apply((tx) => tx.folders.update('h', { public: true }));
        await expectExactTotals('access of one folder');

        const reached = await accessTargets(rm.projectionReads.folders, 's', ADMIN);
        await apply((tx) => {
          tx.subtree.recordOps(reached, position, 'accessChanged', 's');
          tx.folders.setAccess(reached, { access: acl([['u3', 2]]), public: false });
        });
        await expectExactTotals('recursive access');

        await apply((tx) => tx.folders.insert(folder('dest', 'Dest', { type: 'user', id: 'u1' })));
        await apply((tx) =>
          tx.subtree.copyFolder(
            {
              opId: '65a0000000000000000000bb',
              sourceId: 'r',
              folderId: 'copy',
              parentType: 'folder',
              parentId: 'dest',
              name: 'Copy',
              description: '',
              access: acl([['u1', 2]]),
              creatorId: 'u1',
              created: T1,
              meta: {},
              copier: viewer('u3'),
            },
            position,
          ),
        );
        PARENTS.push(
          ...['s', 'h'].map((id) => ({
            parentType: 'folder' as const,
            parentId: deriveId('65a0000000000000000000bb', id),
          })),
        );
        await expectExactTotals('copied');

        await apply((tx) => tx.subtree.clearContents('copy', position));
        await expectExactTotals('emptied');

        const removedAt = position + 1n;
        await apply((tx) => {
          tx.history?.keepRemoved('s', false, removedAt, T1);
          tx.subtree.deleteFolder('s', removedAt);
        });
        await expectExactTotals('deleted');

        if (rm.history) {
          await apply((tx) =>
            tx.history.restoreFolder(
              { folderId: 's', deletedPosition: removedAt, parentType: 'folder', parentId: 'home', name: 'Back' },
              position,
            ),
          );
          await expectExactTotals('restored');
        }

        await apply((tx) => tx.subtree.deleteUnderRoot('collection', 'c1', position));
        await expectExactTotals('collection emptied');
      });
    });

    describe('history (adapters that keep it)', () => {
      const T2 = '2024-03-01T00:00:00.000Z';
      beforeEach(async () => {
        await apply((tx) => {
          tx.users.put(user('u1', 'alice'));
          tx.collections.put(collection('c1', 'Col'));
        });
        await apply((tx) => tx.folders.insert(folder('r', 'Root', { type: 'collection', id: 'c1' })));
        await apply((tx) => tx.folders.insert(folder('s', 'Sub', { type: 'folder', id: 'r' })));
        await apply((tx) => tx.folders.insert(folder('t', 'Deep', { type: 'folder', id: 's' })));
        await apply((tx) => tx.folders.insert(folder('home', 'Home', { type: 'user', id: 'u1' })));
        await apply((tx) => {
          tx.items.insert(item('is', 'In sub', 's'));
          tx.items.insert(item('it', 'In deep', 't'));
          tx.items.insert(item('ir', 'In root', 'r'));
        });
        await apply((tx) => {
          tx.files.insert(file('fs', 'is', 2, 'b'.repeat(64)));
          tx.items.addSize('is', 2);
          tx.files.insert(file('ft', 'it', 4, 'c'.repeat(64)));
          tx.items.addSize('it', 4);
          tx.files.insert(file('fr', 'ir', 1, 'a'.repeat(64)));
          tx.items.addSize('ir', 1);
        });
      });
      const history = () => rm.history;
      const skipWithout = () => rm.history === undefined;

      it('keeps what a delete removes, and restores it under a new parent and name', async () => {
        if (skipWithout()) return;
        const removedAt = position + 1n;
        await apply((tx) => {
          tx.history.keepRemoved('s', false, removedAt, T1);
          tx.subtree.deleteFolder('s', removedAt);
        });
        expect(await rm.folders.get('s')).toBeNull();
        const removed = await history().removedFolder('s');
        expect(removed).toMatchObject({ position: removedAt, rootId: 's', operation: 'deleted', at: T1 });
        expect(removed?.doc).toMatchObject({ _id: 's', name: 'Sub', parentId: 'r', baseParentId: 'c1', size: 2 });
        expect(removed?.doc).not.toHaveProperty('ancestors');
        expect(await history().removedFolder('r')).toBeNull();
        expect((await history().removedItem('it'))?.doc).toMatchObject({ _id: 'it', folderId: 't', size: 4 });
        expect(await history().removedItem('ir')).toBeNull();
        const restorable = await history().restorable('s', removedAt);
        expect(restorable.folderIds.sort()).toEqual(['s', 't']);
        expect(restorable.blobIds.sort()).toEqual(['b'.repeat(64), 'c'.repeat(64)]);
        expect((await history().restorable('t', removedAt)).folderIds).toEqual(['t']);
        expect(await history().isBlobRetained('c'.repeat(64), T0)).toBe(true);
        expect(await history().isBlobRetained('c'.repeat(64), T2)).toBe(false);
        expect(await history().isBlobRetained('a'.repeat(64), T0)).toBe(false);
        expect((await history().blobIdsRemovedBetween(T0, T2)).sort()).toEqual(['b'.repeat(64), 'c'.repeat(64)]);
        expect(await history().blobIdsRemovedBetween(T2, '2025-01-01T00:00:00.000Z')).toEqual([]);
        expect((await rm.collections.get('c1'))?.size).toBe(1);

        const restoredAt = position + 1n;
        await apply((tx) =>
          tx.history.restoreFolder(
            { folderId: 's', deletedPosition: removedAt, parentType: 'folder', parentId: 'home', name: 'Back' },
            restoredAt,
          ),
        );
        expect(await rm.folders.get('s')).toMatchObject({
          name: 'Back',
          lowerName: 'back',
          parentId: 'home',
          baseParentType: 'user',
          baseParentId: 'u1',
          size: 2,
        });
        expect(await rm.folders.ancestorIds('t')).toEqual(['home', 's']);
        expect(await rm.items.get('it')).toMatchObject({ folderId: 't', baseParentId: 'u1', size: 4 });
        expect(await rm.files.get('ft')).toMatchObject({ itemId: 'it', blobId: 'c'.repeat(64) });
        expect((await rm.users.get('u1'))?.size).toBe(6);
        expect((await rm.subtree.subtreeOpsFor('t')).map((o) => [o.operation, o.rootId])).toEqual([
          ['deleted', 's'],
          ['restored', 's'],
        ]);
        expect(await history().removedFolder('s')).toBeNull();
        expect(await history().restorable('s', removedAt)).toEqual({ folderIds: [], blobIds: [] });
        // Restoring again (the folder is live) changes nothing.
        const before = await rm.dump();
        await apply((tx) =>
          tx.history.restoreFolder(
            { folderId: 's', deletedPosition: removedAt, parentType: 'collection', parentId: 'c1', name: 'Again' },
            position + 1n,
          ),
        );
        expect(await rm.folders.get('s')).toMatchObject({ name: 'Back' });
        expect((await rm.dump()).rm_folders).toEqual(before.rm_folders);
      });

      it('keeps what emptying a folder removes (not the items directly in it)', async () => {
        if (skipWithout()) return;
        const at = position + 1n;
        await apply((tx) => {
          tx.history.keepRemoved('r', true, at, T1);
          tx.subtree.clearContents('r', at);
        });
        expect(await history().removedFolder('s')).toMatchObject({ rootId: 'r', operation: 'cleared' });
        expect(await history().removedFolder('r')).toBeNull();
        expect(await history().removedItem('ir')).toBeNull();
        expect((await history().restorable('r', at)).folderIds).toEqual([]);
      });

      it('answers where a folder was, what a parent held and how big a folder was at a position', async () => {
        if (skipWithout()) return;
        const created = position - 4n; // 's' was the third of beforeEach's seven events
        const beforeMove = position;
        await apply((tx) => tx.folders.move('s', 'folder', 'home', T1));
        const moved = position;
        await apply((tx) => tx.items.addSize('is', 10));
        expect(await history().placementAt('s', beforeMove)).toEqual({
          folderId: 's',
          parentType: 'folder',
          parentId: 'r',
          baseParentType: 'collection',
          baseParentId: 'c1',
          from: created,
          to: moved,
        });
        expect(await history().placementAt('s', moved)).toEqual({
          folderId: 's',
          parentType: 'folder',
          parentId: 'home',
          baseParentType: 'user',
          baseParentId: 'u1',
          from: moved,
          to: null,
        });
        expect(await history().placementAt('s', created - 1n)).toBeNull();
        expect((await history().placementAt('t', moved))?.baseParentId).toBe('u1');
        expect((await history().placementAt('t', beforeMove))?.baseParentId).toBe('c1');
        expect(await history().childrenAt('folder', 'r', beforeMove)).toEqual(['s']);
        expect(await history().childrenAt('folder', 'r', moved)).toEqual([]);
        expect(await history().childrenAt('folder', 'home', moved)).toEqual(['s']);
        expect(await history().sizeAt('s', beforeMove)).toBe(2);
        expect(await history().sizeAt('s', position)).toBe(12);
        expect(await history().sizeAt('s', created)).toBe(0);
        const deletedAt = position + 1n;
        await apply((tx) => tx.subtree.deleteFolder('home', deletedAt));
        expect(await history().placementAt('s', deletedAt)).toBeNull();
        expect((await history().placementAt('s', deletedAt - 1n))?.to).toBe(deletedAt);
      });
    });
  });
}
