import { MongoReadModel, type MongoReadModelOptions } from '../../src/infra/readmodel/mongodb/mongoReadModel';
import { splitIn } from '../../src/infra/readmodel/mongodb/boundedIn';
import type { ReadModelTx } from '../../src/ports/readModel';
import type { Viewer } from '../../src/domain/access';
import { MongoStandIn } from '../support/mongoStandIn';
import { collection, folder, insertFolderTree, insertItemsWithFiles, numberedId } from './readModelContract';

/**
 * Subtree operations of the MongoDB read model name their documents by lists of ids; a list of a large subtree
 * passes the server's statement limit (16 MiB). Over the strict stand-in with that limit lowered to 4 KiB (so that
 * 200 folders are enough), the delete, the copy and the subtree reads must go out as bounded statements: on the
 * old adapter each failed with BSONObjectTooLarge, at every retry.
 */

const FOLDERS = 200;
/** 24 characters, like every id of the service. */
const id = numberedId;
const admin: Viewer = { id: 'u1', admin: true, groups: [] };

async function overSmallLimit(options: MongoReadModelOptions = {}) {
  const standIn = new MongoStandIn({ transactions: true, maxBsonObjectSize: 4 * 1024 });
  const readModel = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), options);
  let position = 0n;
  const apply = (write: (tx: ReadModelTx) => void) => readModel.apply('rm', ++position, write);
  // A collection holding `root`, with FOLDERS folders below it (a few levels deep), an item and a file in each.
  await apply((tx) => {
    tx.collections.put(collection('c1', 'Shared'));
    tx.folders.insert(folder('root', 'Root', { type: 'collection', id: 'c1' }));
    insertFolderTree(tx, 'root', FOLDERS, 30);
  });
  await apply((tx) => insertItemsWithFiles(tx, FOLDERS));
  return { standIn, readModel, apply, at: () => position };
}

describe('MongoReadModel: lists of ids in bounded statements (document limit lowered to 4 KiB)', () => {
  it('splits only what passes the budget, keeping the rest of the filter in every piece', () => {
    const ids = Array.from({ length: 100 }, (_, n) => id('f', n));
    expect(splitIn({ folderId: { $in: ids }, stamp: 's' }, 100_000)).toHaveLength(1);
    const pieces = splitIn({ folderId: { $in: ids }, stamp: 's' }, 1000);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.flatMap((p) => (p.folderId as { $in: string[] }).$in)).toEqual(ids);
    for (const piece of pieces) expect(piece.stamp).toBe('s');
  });

  it('splits two long lists until every piece fits, covering every pair of their values', () => {
    const a = Array.from({ length: 60 }, (_, n) => id('a', n));
    const b = Array.from({ length: 60 }, (_, n) => id('b', n));
    const pieces = splitIn({ folderId: { $in: a }, itemId: { $in: b } }, 1000);
    const pairs = new Set<string>();
    for (const piece of pieces) {
      const [pa, pb] = [(piece.folderId as { $in: string[] }).$in, (piece.itemId as { $in: string[] }).$in];
      expect((pa.length + pb.length) * 38).toBeLessThanOrEqual(1000);
      for (const x of pa) for (const y of pb) pairs.add(`${x}|${y}`);
    }
    expect(pairs.size).toBe(a.length * b.length);
  });

  it('reads a large subtree (count, blobs) and deletes it, items and files with it', async () => {
    const { standIn, readModel, apply, at } = await overSmallLimit();
    expect(standIn.maxBsonObjectSize).toBe(4 * 1024);
    expect(await readModel.subtree.subtreeCount('root')).toBe(1 + FOLDERS + FOLDERS);
    expect((await readModel.subtree.blobIdsInSubtree('root')).sort()).toEqual(
      ['0', '1', '2', '3', '4', '5', '6'].map((d) => d.repeat(64)),
    );

    expect(await apply((tx) => tx.subtree.deleteFolder('root', at() + 1n))).toBe(true);
    expect(await readModel.folders.get('root')).toBeNull();
    expect(await readModel.folders.get(id('f', FOLDERS - 1))).toBeNull();
    expect(await readModel.items.get(id('i', 0))).toBeNull();
    expect(await readModel.subtree.subtreeCount('root')).toBe(0);
    expect((await readModel.collections.get('c1'))?.size).toBe(0);
  });

  it('deletes a large subtree applied in steps: a step over many documents names them in bounded statements', async () => {
    // Every folder and item in one step: the ids a step's part of an `updateMany` or `deleteMany` names pass the budget.
    const { readModel, apply, at } = await overSmallLimit({ stepwiseAbove: 50, documentsPerStep: 10_000 });
    expect(await apply((tx) => tx.subtree.deleteFolder('root', at() + 1n))).toBe(true);
    expect(await readModel.folders.get(id('f', FOLDERS - 1))).toBeNull();
    expect(await readModel.items.get(id('i', 0))).toBeNull();
    expect(await readModel.subtree.subtreeCount('root')).toBe(0);
    expect((await readModel.collections.get('c1'))?.size).toBe(0);
  });

  it('copies a large subtree', async () => {
    const { readModel, apply, at } = await overSmallLimit();
    await apply((tx) => tx.folders.insert(folder('dest', 'Dest', { type: 'collection', id: 'c1' })));
    const copied = await apply((tx) =>
      tx.subtree.copyFolder(
        {
          opId: '65a0000000000000000000aa',
          sourceId: 'root',
          folderId: 'copy',
          parentType: 'folder',
          parentId: 'dest',
          name: 'Copy',
          description: '',
          access: { users: [], groups: [] },
          creatorId: 'u1',
          created: '2024-02-01T00:00:00.000Z',
          meta: {},
          copier: admin,
        },
        at() + 1n,
      ),
    );
    expect(copied).toBe(true);
    expect(await readModel.subtree.subtreeCount('copy')).toBe(1 + FOLDERS + FOLDERS);
    expect((await readModel.collections.get('c1'))?.size).toBe(2 * FOLDERS);
  });
});
