import { deciderSpec } from '../support/givenWhenThen';
import { folderDecider, folderNameCandidate, folderStateFor, folderStateFromDoc } from '../../src/domain/folder';
import { folderEventSchemas, type FolderCopiedData, type FolderEvent } from '../../src/domain/folderEvents';
import { RestError, ValidationError } from '../../src/domain/errors';
import { foldEvents } from '../../src/domain/decider';

const ID = '65f000000000000000000001';
const SOURCE = '65f000000000000000000009';
const USER = '65f0000000000000000000aa';
const PARENT = '65f000000000000000000002';
const OP = '65f0000000000000000000ff';
const T0 = '2024-05-01T12:00:00+00:00';
const T1 = '2024-05-01T12:00:01.500000+00:00';
const ACL = { users: [{ id: USER, level: 2 as const, flags: [] }], groups: [] };
const COPIER = { id: USER, admin: false, groups: ['65f0000000000000000000bb'] };

const { given } = deciderSpec(folderDecider, () => folderStateFor(ID));

const created: FolderEvent = {
  type: 'FolderCreated',
  data: {
    folderId: ID,
    name: 'Data',
    description: '',
    parentType: 'folder',
    parentId: PARENT,
    creatorId: USER,
    created: T0,
    public: false,
    access: ACL,
    meta: { a: 1 },
  },
};
const deleted: FolderEvent = {
  type: 'FolderDeleted',
  data: { folderId: ID, parentType: 'folder', parentId: PARENT, name: 'Data', opId: OP },
};
const copiedData = (overrides: Partial<FolderCopiedData> = {}): FolderCopiedData => ({
  opId: OP,
  sourceId: SOURCE,
  folderId: ID,
  parentType: 'folder',
  parentId: PARENT,
  name: 'Data (1)',
  description: 'about',
  public: true,
  publicFlags: [],
  access: ACL,
  creatorId: USER,
  created: T1,
  meta: { k: { deep: [1] } },
  copier: COPIER,
  ...overrides,
});
const copyCommand = (overrides: Record<string, unknown> = {}) => ({
  type: 'CopyFolder' as const,
  data: { ...copiedData(), ...overrides },
});

describe('folder decider: subtree operations', () => {
  describe('DeleteFolder', () => {
    it('records the folder, its parent and name, and the operation id', () => {
      given([created])
        .when({ type: 'DeleteFolder', data: { opId: OP } })
        .then([deleted]);
    });

    it('refuses a folder that does not exist, or no longer does', () => {
      given([])
        .when({ type: 'DeleteFolder', data: { opId: OP } })
        .thenThrows(new RestError(`Invalid folder id (${ID}).`));
      given([created, deleted])
        .when({ type: 'DeleteFolder', data: { opId: OP } })
        .thenThrows(new RestError(`Invalid folder id (${ID}).`));
    });

    it('makes every later command refuse the folder', () => {
      const invalid = new RestError(`Invalid folder id (${ID}).`);
      given([created, deleted])
        .when({ type: 'UpdateFolder', data: { name: 'x', now: T1 } })
        .thenThrows(invalid);
      given([created, deleted])
        .when({ type: 'SetFolderMetadata', data: { metadata: { b: 2 }, allowNull: false, now: T1 } })
        .thenThrows(invalid);
      given([created, deleted])
        .when({ type: 'DeleteFolderMetadata', data: { fields: ['a'], now: T1 } })
        .thenThrows(invalid);
      given([created, deleted])
        .when({ type: 'SetFolderAccess', data: { access: ACL } })
        .thenThrows(invalid);
      given([created, deleted])
        .when({ type: 'MoveFolder', data: { parentType: 'user', parentId: USER, targetPath: [], now: T1 } })
        .thenThrows(invalid);
      given([created, deleted])
        .when({ type: 'ClearFolderContents', data: { opId: OP } })
        .thenThrows(invalid);
    });

    it('never lets the id be created again', () => {
      given([created, deleted])
        .when({ type: 'CreateFolder', data: { ...created.data, created: T1 } } as never)
        .thenRefuses(`Folder ${ID} already exists.`);
      given([created, deleted]).when(copyCommand()).thenRefuses(`Folder ${ID} already exists.`);
    });
  });

  describe('ClearFolderContents', () => {
    it('records the operation and changes nothing of the folder itself', () => {
      const cleared: FolderEvent = { type: 'FolderContentsCleared', data: { folderId: ID, opId: OP } };
      given([created])
        .when({ type: 'ClearFolderContents', data: { opId: OP } })
        .then([cleared]);
      const before = foldEvents(folderDecider, [created]);
      expect(foldEvents(folderDecider, [created, cleared])).toEqual(before);
    });

    it('refuses an unknown folder', () => {
      given([])
        .when({ type: 'ClearFolderContents', data: { opId: OP } })
        .thenThrows(new RestError(`Invalid folder id (${ID}).`));
    });
  });

  describe('CopyFolder', () => {
    it('creates the new folder from everything the command decided, stripping name and description', () => {
      given([])
        .when(copyCommand({ name: '  Data (1) ', description: ' about  ' }))
        .then([{ type: 'FolderCopied', data: copiedData() }]);
    });

    it('records no public field when none was decided (a user parent, a source without one)', () => {
      const { public: _omit, ...data } = copiedData({ parentType: 'user', parentId: USER });
      given([])
        .when({ type: 'CopyFolder', data: { ...data } })
        .then([{ type: 'FolderCopied', data }]);
    });

    it('refuses an empty name, and a folder id already used', () => {
      given([])
        .when(copyCommand({ name: '  ' }))
        .thenThrows(new ValidationError('Folder name must not be empty.', 'name'));
      given([created]).when(copyCommand()).thenRefuses(`Folder ${ID} already exists.`);
    });

    it('gives the new folder a state later commands work on', () => {
      const state = foldEvents(folderDecider, [{ type: 'FolderCopied', data: copiedData() }]);
      expect(state).toEqual({
        exists: true,
        folderId: ID,
        name: 'Data (1)',
        description: 'about',
        parentType: 'folder',
        parentId: PARENT,
        public: true,
        publicFlags: [],
        access: ACL,
        meta: { k: { deep: [1] } },
        updated: T1,
      });
      const events = folderDecider.decide(
        { type: 'SetFolderMetadata', data: { metadata: { b: 2 }, allowNull: false, now: T1 } },
        state,
      );
      expect(events).toEqual([
        { type: 'FolderMetadataChanged', data: { folderId: ID, meta: { k: { deep: [1] }, b: 2 }, updated: T1 } },
      ]);
    });

    it('does not share the metadata, ACL or copier objects with the command', () => {
      const command = structuredClone(copyCommand());
      const [event] = folderDecider.decide(command, folderStateFor(ID));
      (command.data.meta as { k: { deep: number[] } }).k.deep.push(2);
      command.data.access.users.push({ id: PARENT, level: 0, flags: [] });
      command.data.copier.groups.push('x');
      expect(event.data).toEqual(copiedData());
    });
  });

  it('renames copies Girder’s way', () => {
    expect([0, 1, 2].map((n) => folderNameCandidate('Main Folder', n))).toEqual([
      'Main Folder',
      'Main Folder (1)',
      'Main Folder (2)',
    ]);
  });

  it('builds the state of a folder created by a copy from its read-model document', () => {
    const doc = {
      _id: ID,
      name: 'A',
      description: 'd',
      parentCollection: 'folder' as const,
      parentId: PARENT,
      public: false,
      access: ACL,
      meta: { x: 1 },
      updated: T1,
    };
    expect(folderStateFromDoc(doc)).toEqual({
      exists: true,
      folderId: ID,
      name: 'A',
      description: 'd',
      parentType: 'folder',
      parentId: PARENT,
      public: false,
      access: ACL,
      meta: { x: 1 },
      updated: T1,
    });
  });

  it('publishes a schema for every new event, and every decided event satisfies it', () => {
    expect(Object.keys(folderEventSchemas)).toEqual(
      expect.arrayContaining(['FolderDeleted', 'FolderContentsCleared', 'FolderCopied']),
    );
    expect(() => folderEventSchemas.FolderDeleted.parse(deleted.data)).not.toThrow();
    expect(() => folderEventSchemas.FolderContentsCleared.parse({ folderId: ID, opId: OP })).not.toThrow();
    expect(() => folderEventSchemas.FolderCopied.parse(copiedData())).not.toThrow();
    expect(() => folderEventSchemas.FolderCopied.parse({ ...copiedData(), copier: undefined })).toThrow();
    expect(() => folderEventSchemas.FolderDeleted.parse({ ...deleted.data, parentType: 'item' })).toThrow();
  });
});
