import { deciderSpec } from '../support/givenWhenThen';
import { itemDecider, itemStateFor, extensionsOf } from '../../src/domain/item';
import { itemEventSchemas, type FileRecord, type ItemEvent } from '../../src/domain/itemEvents';
import { RestError, ValidationError } from '../../src/domain/errors';
import { foldEvents } from '../../src/domain/decider';

const ITEM = '64b000000000000000000001';
const FOLDER = '64b000000000000000000002';
const OTHER_FOLDER = '64b000000000000000000003';
const USER = '64b000000000000000000004';
const T0 = '2024-05-01T12:00:00+00:00';
const T1 = '2024-05-01T12:00:01+00:00';

const spec = deciderSpec(itemDecider, () => itemStateFor(ITEM));

const created: ItemEvent = {
  type: 'ItemCreated',
  data: { itemId: ITEM, folderId: FOLDER, name: 'item', description: '', creatorId: USER, created: T0, meta: {} },
};

const file = (fileId: string, size: number, blobId = 'a'.repeat(64), name = 'f.tar.gz'): FileRecord => ({
  fileId,
  name,
  mimeType: 'application/octet-stream',
  size,
  blobId,
  creatorId: USER,
  created: T0,
  exts: extensionsOf(name),
});
const fileCreated = (record: FileRecord): ItemEvent => ({ type: 'FileCreated', data: { ...record, itemId: ITEM } });

describe('item decider', () => {
  it('creates an item with stripped name and description, validating metadata', () => {
    spec
      .given([])
      .when({
        type: 'CreateItem',
        data: {
          itemId: ITEM,
          folderId: FOLDER,
          name: ' item ',
          description: ' d ',
          creatorId: USER,
          created: T0,
          metadata: { a: 1, b: null },
        },
      })
      .then([
        {
          type: 'ItemCreated',
          data: {
            itemId: ITEM,
            folderId: FOLDER,
            name: 'item',
            description: 'd',
            creatorId: USER,
            created: T0,
            meta: { a: 1 },
          },
        },
      ]);
  });

  it('refuses an empty name and invalid metadata keys', () => {
    spec
      .given([])
      .when({
        type: 'CreateItem',
        data: { itemId: ITEM, folderId: FOLDER, name: '  ', description: '', creatorId: USER, created: T0 },
      })
      .thenThrows(new ValidationError('Item name must not be empty.', 'name'));
    spec
      .given([])
      .when({
        type: 'CreateItem',
        data: {
          itemId: ITEM,
          folderId: FOLDER,
          name: 'n',
          description: '',
          creatorId: USER,
          created: T0,
          metadata: { '': 1 },
        },
      })
      .thenThrows(new ValidationError('Key names must not be empty.'));
  });

  it('refuses commands on an item that does not exist (or no longer does)', () => {
    spec
      .given([])
      .when({ type: 'DeleteItem', data: {} })
      .thenThrows(new RestError(`Invalid item id (${ITEM}).`));
    spec
      .given([created, { type: 'ItemDeleted', data: { itemId: ITEM, folderId: FOLDER, name: 'item', files: [] } }])
      .when({ type: 'UpdateItem', data: { name: 'x', now: T1 } })
      .thenThrows(new RestError(`Invalid item id (${ITEM}).`));
  });

  it('updates name and description (description stripped as Girder validates) and always advances updated', () => {
    spec
      .given([created])
      .when({ type: 'UpdateItem', data: { description: ' new ', now: T1 } })
      .then([{ type: 'ItemUpdated', data: { itemId: ITEM, description: 'new', updated: T1 } }]);
    spec
      .given([created])
      .when({ type: 'UpdateItem', data: { name: '', now: T1 } })
      .thenThrows(new ValidationError('Item name must not be empty.', 'name'));
  });

  it('moves to another folder, and does nothing when the folder is the same', () => {
    spec
      .given([created])
      .when({ type: 'MoveItem', data: { folderId: OTHER_FOLDER, name: 'item (1)', now: T1 } })
      .then([
        {
          type: 'ItemMoved',
          data: { itemId: ITEM, fromFolderId: FOLDER, folderId: OTHER_FOLDER, name: 'item (1)', updated: T1 },
        },
      ]);
    spec
      .given([created])
      .when({ type: 'MoveItem', data: { folderId: FOLDER, name: 'item', now: T1 } })
      .then([]);
  });

  it('merges metadata (nulls delete unless allowed) and deletes keys', () => {
    const withMeta: ItemEvent = {
      type: 'ItemMetadataChanged',
      data: { itemId: ITEM, meta: { a: 1, b: 2 }, updated: T0 },
    };
    spec
      .given([created, withMeta])
      .when({ type: 'SetItemMetadata', data: { metadata: { a: null, c: 3 }, allowNull: false, now: T1 } })
      .then([{ type: 'ItemMetadataChanged', data: { itemId: ITEM, meta: { b: 2, c: 3 }, updated: T1 } }]);
    spec
      .given([created, withMeta])
      .when({ type: 'SetItemMetadata', data: { metadata: { a: null }, allowNull: true, now: T1 } })
      .then([{ type: 'ItemMetadataChanged', data: { itemId: ITEM, meta: { a: null, b: 2 }, updated: T1 } }]);
    spec
      .given([created, withMeta])
      .when({ type: 'DeleteItemMetadata', data: { fields: ['a', 'zz'], now: T1 } })
      .then([{ type: 'ItemMetadataChanged', data: { itemId: ITEM, meta: { b: 2 }, updated: T1 } }]);
    spec
      .given([created, withMeta])
      .when({ type: 'DeleteItemMetadata', data: { fields: ['a.b'], now: T1 } })
      .thenThrows(new ValidationError('Invalid key a.b: keys must not contain the "." character.'));
  });

  it('adds files with their extensions, and tracks the item size', () => {
    const record = { ...file('64b0000000000000000000f1', 10), exts: [] };
    spec
      .given([created])
      .when({ type: 'AddFile', data: { file: record } })
      .then([{ type: 'FileCreated', data: { ...record, exts: ['tar', 'gz'], itemId: ITEM } }]);
    const state = foldEvents(itemDecider, [
      created,
      fileCreated(file('64b0000000000000000000f1', 10)),
      fileCreated(file('64b0000000000000000000f2', 5)),
    ]);
    expect(state.size).toBe(15);
    spec
      .given([created])
      .when({ type: 'AddFile', data: { file: { ...record, name: '' } } })
      .thenThrows(new ValidationError('File name must not be empty.', 'name'));
  });

  it('replaces and deletes files, naming the blobs they used', () => {
    const f1 = file('64b0000000000000000000f1', 10, 'a'.repeat(64));
    spec
      .given([created, fileCreated(f1)])
      .when({
        type: 'ReplaceFileContents',
        data: {
          fileId: f1.fileId,
          blobId: 'b'.repeat(64),
          size: 3,
          sha512: 'e'.repeat(128),
          creatorId: USER,
          created: T1,
        },
      })
      .then([
        {
          type: 'FileContentsReplaced',
          data: {
            itemId: ITEM,
            fileId: f1.fileId,
            blobId: 'b'.repeat(64),
            size: 3,
            previousBlobId: 'a'.repeat(64),
            previousSize: 10,
            creatorId: USER,
            created: T1,
            sha512: 'e'.repeat(128),
          },
        },
      ]);
    spec
      .given([created, fileCreated(f1)])
      .when({ type: 'DeleteFile', data: { fileId: f1.fileId } })
      .then([{ type: 'FileDeleted', data: { itemId: ITEM, fileId: f1.fileId, blobId: 'a'.repeat(64), size: 10 } }]);
    spec
      .given([
        created,
        fileCreated(f1),
        { type: 'FileDeleted', data: { itemId: ITEM, fileId: f1.fileId, blobId: 'a'.repeat(64), size: 10 } },
      ])
      .when({ type: 'DeleteFile', data: { fileId: f1.fileId } })
      .thenThrows(new RestError(`Invalid file id (${f1.fileId}).`));
  });

  describe('SHA-512 of a file', () => {
    const f1 = { ...file('64b0000000000000000000f1', 10, 'a'.repeat(64)), sha512: '1'.repeat(128) };
    const replaced = (sha512?: string): ItemEvent => ({
      type: 'FileContentsReplaced',
      data: {
        itemId: ITEM,
        fileId: f1.fileId,
        blobId: 'b'.repeat(64),
        size: 3,
        previousBlobId: 'a'.repeat(64),
        previousSize: 10,
        creatorId: USER,
        created: T1,
        ...(sha512 !== undefined ? { sha512 } : {}),
      },
    });

    it('follows the bytes: a replacement brings its own, or none when its event has none', () => {
      expect(foldEvents(itemDecider, [created, fileCreated(f1)]).files[f1.fileId].sha512).toBe('1'.repeat(128));
      const withNew = foldEvents(itemDecider, [created, fileCreated(f1), replaced('2'.repeat(128))]);
      expect(withNew.files[f1.fileId].sha512).toBe('2'.repeat(128));
      const withNone = foldEvents(itemDecider, [created, fileCreated(f1), replaced()]);
      expect(withNone.files[f1.fileId]).not.toHaveProperty('sha512');
    });

    it('is recorded for a file without one, for the bytes that were hashed', () => {
      const { sha512: _none, ...old } = f1;
      spec
        .given([created, fileCreated(old)])
        .when({ type: 'RecordFileHash', data: { fileId: f1.fileId, blobId: f1.blobId, sha512: '3'.repeat(128) } })
        .then([
          {
            type: 'FileHashComputed',
            data: { itemId: ITEM, fileId: f1.fileId, blobId: f1.blobId, sha512: '3'.repeat(128) },
          },
        ]);
      const state = foldEvents(itemDecider, [
        created,
        fileCreated(old),
        {
          type: 'FileHashComputed',
          data: { itemId: ITEM, fileId: f1.fileId, blobId: f1.blobId, sha512: '3'.repeat(128) },
        },
      ]);
      expect(state.files[f1.fileId].sha512).toBe('3'.repeat(128));
    });

    it('records nothing when the file has one, or when its bytes changed while the old ones were hashed', () => {
      spec
        .given([created, fileCreated(f1)])
        .when({ type: 'RecordFileHash', data: { fileId: f1.fileId, blobId: f1.blobId, sha512: '3'.repeat(128) } })
        .then([]);
      const { sha512: _none, ...old } = f1;
      spec
        .given([created, fileCreated(old), replaced()])
        .when({ type: 'RecordFileHash', data: { fileId: f1.fileId, blobId: f1.blobId, sha512: '3'.repeat(128) } })
        .then([]);
    });

    it('is refused for a file the item does not have', () => {
      spec
        .given([created])
        .when({ type: 'RecordFileHash', data: { fileId: f1.fileId, blobId: f1.blobId, sha512: '3'.repeat(128) } })
        .thenThrows(new RestError(`Invalid file id (${f1.fileId}).`));
    });

    it('is lower-case hex of 128 digits in every event that carries one', () => {
      const data = { itemId: ITEM, fileId: f1.fileId, blobId: f1.blobId };
      expect(itemEventSchemas.FileHashComputed.safeParse({ ...data, sha512: '3'.repeat(128) }).success).toBe(true);
      for (const bad of ['3'.repeat(127), 'A'.repeat(128), 'g'.repeat(128)]) {
        expect(itemEventSchemas.FileHashComputed.safeParse({ ...data, sha512: bad }).success).toBe(false);
        expect(itemEventSchemas.FileCreated.safeParse({ ...f1, itemId: ITEM, sha512: bad }).success).toBe(false);
      }
    });
  });

  it('deletes the item with all its files', () => {
    const f1 = file('64b0000000000000000000f1', 10, 'a'.repeat(64));
    const f2 = file('64b0000000000000000000f2', 4, 'c'.repeat(64));
    spec
      .given([created, fileCreated(f1), fileCreated(f2)])
      .when({ type: 'DeleteItem', data: {} })
      .then([
        {
          type: 'ItemDeleted',
          data: {
            itemId: ITEM,
            folderId: FOLDER,
            name: 'item',
            files: [
              { fileId: f1.fileId, blobId: 'a'.repeat(64), size: 10 },
              { fileId: f2.fileId, blobId: 'c'.repeat(64), size: 4 },
            ],
          },
        },
      ]);
  });

  it('records copies on the source', () => {
    spec
      .given([created])
      .when({ type: 'RecordCopy', data: { copyItemId: OTHER_FOLDER } })
      .then([{ type: 'ItemCopied', data: { itemId: ITEM, copyItemId: OTHER_FOLDER } }]);
  });

  it('emits only events that satisfy the published schemas', () => {
    const f1 = file('64b0000000000000000000f1', 10);
    const events = [
      created,
      fileCreated(f1),
      {
        type: 'ItemMoved',
        data: { itemId: ITEM, fromFolderId: FOLDER, folderId: OTHER_FOLDER, name: 'x', updated: T1 },
      },
    ] as ItemEvent[];
    for (const event of events) expect(() => itemEventSchemas[event.type].parse(event.data)).not.toThrow();
    expect(() => itemEventSchemas.FileCreated.parse({ ...f1, itemId: ITEM, size: -1 })).toThrow();
  });

  it('computes Girder’s extensions', () => {
    expect(extensionsOf('archive.TAR.gz')).toEqual(['tar', 'gz']);
    expect(extensionsOf('.bashrc')).toEqual(['bashrc']);
    expect(extensionsOf('README')).toEqual([]);
  });

  describe('file records', () => {
    const f1 = file('64b0000000000000000000f1', 10);

    it('renames a file (new exts) and changes its MIME type; an empty name is refused', () => {
      spec
        .given([created, fileCreated(f1)])
        .when({ type: 'UpdateFile', data: { fileId: f1.fileId, name: 'b.ZIP', mimeType: 'application/zip' } })
        .then([
          {
            type: 'FileUpdated',
            data: { itemId: ITEM, fileId: f1.fileId, name: 'b.ZIP', mimeType: 'application/zip' },
          },
        ]);
      const state = foldEvents(itemDecider, [
        created,
        fileCreated(f1),
        { type: 'FileUpdated', data: { itemId: ITEM, fileId: f1.fileId, name: 'b.ZIP' } },
      ]);
      expect(state.files[f1.fileId]).toMatchObject({ name: 'b.ZIP', exts: ['zip'], mimeType: f1.mimeType });
      spec
        .given([created, fileCreated(f1)])
        .when({ type: 'UpdateFile', data: { fileId: f1.fileId, name: '' } })
        .thenThrows(new ValidationError('File name must not be empty.', 'name'));
      spec
        .given([created])
        .when({ type: 'UpdateFile', data: { fileId: f1.fileId, name: 'x' } })
        .thenThrows(new RestError(`Invalid file id (${f1.fileId}).`));
    });

    it('records a copy of a file on its source, and refuses a file it does not hold', () => {
      const copy = { fileId: f1.fileId, copyFileId: '64b0000000000000000000f2', toItemId: OTHER_FOLDER };
      spec
        .given([created, fileCreated(f1)])
        .when({ type: 'RecordFileCopy', data: copy })
        .then([{ type: 'FileCopied', data: { itemId: ITEM, ...copy } }]);
      spec
        .given([created])
        .when({ type: 'RecordFileCopy', data: copy })
        .thenThrows(new RestError(`Invalid file id (${f1.fileId}).`));
    });

    it("sets an item's and a file's times", () => {
      spec
        .given([created, fileCreated(f1)])
        .when({ type: 'SetItemTimestamps', data: { created: T1 } })
        .then([{ type: 'ItemTimestampsSet', data: { itemId: ITEM, created: T1 } }]);
      spec
        .given([created, fileCreated(f1)])
        .when({ type: 'SetFileCreated', data: { fileId: f1.fileId, created: T1 } })
        .then([{ type: 'FileTimestampsSet', data: { itemId: ITEM, fileId: f1.fileId, created: T1 } }]);
      const state = foldEvents(itemDecider, [
        created,
        fileCreated(f1),
        { type: 'ItemTimestampsSet', data: { itemId: ITEM, updated: T1 } },
        { type: 'FileTimestampsSet', data: { itemId: ITEM, fileId: f1.fileId, created: T1 } },
      ]);
      expect(state).toMatchObject({ created: T0, updated: T1 });
      expect(state.files[f1.fileId].created).toBe(T1);
      spec
        .given([])
        .when({ type: 'SetItemTimestamps', data: { created: T1 } })
        .thenRefuses(`Invalid item id (${ITEM}).`);
    });
  });
});
