import type { ReadModel, ReadModelTx } from '../../src/ports/readModel';
import type { RecordedEvent } from '../../src/ports/eventStore';
import type { FolderEvent } from '../../src/domain/folderEvents';
import type { ItemEvent } from '../../src/domain/itemEvents';
import { readModelProjection } from '../../src/projections';
import { writerOf } from '../../src/projections/projection';

const T0 = '2024-01-01T00:00:00.000Z';
const T1 = '2024-02-01T00:00:00.000Z';
const NO_ACCESS = { users: [], groups: [] };
const collection = (id: string, name: string) => ({
  _id: id,
  name,
  description: '',
  public: false,
  access: NO_ACCESS,
  created: T0,
  updated: T0,
  size: 0,
  meta: {},
  creatorId: null,
});

/**
 * Events that raced a delete, applied through the projections as the projector applies them (plan, then writes), on
 * every adapter: the late-event rule of src/projections/lateEvents.ts over the adapter's `tx.ifPresent`. The HTTP
 * tests race folder creations, changes and moves against a delete (test/http/folderDelete.test.ts); these are the
 * cases a request cannot easily race: items and files of a deleted folder, an item moved into one, a deleted folder
 * moved, a restore into one, and a write conditional on a row written earlier in the same event.
 */
export function lateEventsContract(readModel: () => ReadModel): void {
  describe('late events, as the projections apply them', () => {
    let position = 0n;
    beforeEach(() => {
      position = 0n;
    });
    const apply = (write: (tx: ReadModelTx) => void) => readModel().apply('late', ++position, write);
    const project = async (event: FolderEvent | ItemEvent) => {
      const recorded: RecordedEvent = {
        id: `e${position + 1n}`,
        streamId: 'test',
        revision: 0n,
        position: position + 1n,
        type: event.type,
        data: event.data,
        metadata: { userId: null, requestId: null, correlationId: null, causationId: null, at: T1 },
      };
      const write = await writerOf(readModelProjection, recorded, readModel().projectionReads);
      expect(await apply(write)).toBe(true);
    };
    const createFolder = (folderId: string, parentType: 'collection' | 'folder', parentId: string) =>
      project({
        type: 'FolderCreated',
        data: {
          folderId,
          parentType,
          parentId,
          name: folderId,
          description: '',
          creatorId: null,
          created: T0,
          access: NO_ACCESS,
          meta: {},
        },
      });
    const createItem = (itemId: string, folderId: string) =>
      project({
        type: 'ItemCreated',
        data: { itemId, folderId, name: itemId, description: '', creatorId: null, created: T0, meta: {} },
      });
    const addFile = (fileId: string, itemId: string, size: number) =>
      project({
        type: 'FileCreated',
        data: {
          itemId,
          fileId,
          name: `${fileId}.bin`,
          mimeType: 'application/octet-stream',
          size,
          blobId: fileId.padEnd(64, '0'),
          creatorId: null,
          created: T0,
          exts: ['bin'],
        },
      });

    it('skips what names a deleted item or folder, and takes an item moved into one with it', async () => {
      const rm = readModel();
      await apply((tx) => {
        tx.collections.put(collection('c1', 'Col'));
      });
      await createFolder('doomed', 'collection', 'c1');
      await createFolder('inner', 'folder', 'doomed');
      await createFolder('kept', 'collection', 'c1');
      await createItem('lost', 'inner');
      await addFile('f1', 'lost', 4);
      await createItem('mover', 'kept');
      await addFile('f2', 'mover', 3);
      expect((await rm.collections.get('c1'))?.size).toBe(7);
      await project({
        type: 'FolderDeleted',
        data: { folderId: 'doomed', parentType: 'collection', parentId: 'c1', name: 'doomed', opId: 'op1' },
      });
      const deletedPosition = position.toString();
      expect((await rm.collections.get('c1'))?.size).toBe(3);

      // Decided before the delete, appended after it: each changes nothing, and the projector goes on.
      await createItem('late', 'inner');
      await project({ type: 'ItemUpdated', data: { itemId: 'lost', name: 'Back', updated: T1 } });
      await project({ type: 'ItemMetadataChanged', data: { itemId: 'lost', meta: { back: true }, updated: T1 } });
      await addFile('f3', 'lost', 5);
      await project({
        type: 'FileContentsReplaced',
        data: {
          itemId: 'lost',
          fileId: 'f1',
          blobId: 'b'.repeat(64),
          size: 9,
          previousBlobId: 'f1'.padEnd(64, '0'),
          previousSize: 4,
          creatorId: null,
          created: T1,
        },
      });
      await project({
        type: 'FileHashComputed',
        data: { itemId: 'lost', fileId: 'f1', blobId: 'f1'.padEnd(64, '0'), sha512: 'a'.repeat(128) },
      });
      await project({
        type: 'FileDeleted',
        data: { itemId: 'lost', fileId: 'f1', blobId: 'f1'.padEnd(64, '0'), size: 4 },
      });
      await project({
        type: 'FolderMoved',
        data: {
          folderId: 'inner',
          fromParentType: 'folder',
          fromParentId: 'doomed',
          parentType: 'folder',
          parentId: 'kept',
          updated: T1,
        },
      });
      await project({ type: 'FolderAccessChanged', data: { folderId: 'inner', access: NO_ACCESS, public: true } });
      expect(await rm.items.get('late')).toBeNull();
      expect(await rm.items.get('lost')).toBeNull();
      expect([await rm.files.get('f1'), await rm.files.get('f3')]).toEqual([null, null]);
      expect(await rm.folders.get('inner')).toBeNull();
      expect((await rm.folders.get('kept'))?.size).toBe(3);
      expect((await rm.collections.get('c1'))?.size).toBe(3);

      // An item moved into the deleted folder goes with it, its size leaving its old folder and the root.
      await project({
        type: 'ItemMoved',
        data: { itemId: 'mover', fromFolderId: 'kept', folderId: 'inner', name: 'mover', updated: T1 },
      });
      expect(await rm.items.get('mover')).toBeNull();
      expect(await rm.files.get('f2')).toBeNull();
      expect((await rm.folders.get('kept'))?.size).toBe(0);
      expect((await rm.collections.get('c1'))?.size).toBe(0);

      // A restore under a parent that is gone brings nothing back (it stops nothing); under one that stands, it does.
      const restore = (parentId: string) =>
        project({
          type: 'FolderRestored',
          data: {
            folderId: 'inner',
            opId: 'op2',
            deletedPosition,
            parentType: 'folder',
            parentId,
            name: 'inner',
            description: '',
            access: NO_ACCESS,
            meta: {},
            creatorId: null,
            created: T0,
            updated: T1,
          },
        });
      await restore('doomed');
      expect(await rm.folders.get('inner')).toBeNull();
      await restore('kept');
      expect(await rm.folders.get('inner')).toMatchObject({ parentId: 'kept', size: 4 });
    });

    it('checks presence after the writes before it in the same event, and nests', async () => {
      const rm = readModel();
      const folderUnder = (id: string, parentId: string) => ({
        _id: id,
        name: id,
        lowerName: id,
        description: '',
        parentCollection: 'collection' as const,
        parentId,
        creatorId: null,
        created: T0,
        updated: T0,
        size: 0,
        access: NO_ACCESS,
        meta: {},
      });
      await apply((tx) => {
        tx.collections.put(collection('c2', 'New'));
        tx.ifPresent(
          { kind: 'collection', id: 'c2' },
          (tx) =>
            tx.ifPresent(
              { kind: 'folder', id: 'nowhere' },
              (tx) => tx.folders.insert(folderUnder('wrong', 'c2')),
              (tx) => tx.folders.insert(folderUnder('right', 'c2')),
            ),
          (tx) => tx.folders.insert(folderUnder('wrong', 'c2')),
        );
      });
      expect(await rm.folders.get('right')).not.toBeNull();
      expect(await rm.folders.get('wrong')).toBeNull();
    });
  });
}
