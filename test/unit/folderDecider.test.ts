import { deciderSpec } from '../support/givenWhenThen';
import { refuseTakenSiblingName, folderDecider, folderStateFor } from '../../src/domain/folder';
import { folderEventSchemas, type FolderCreatedData, type FolderEvent } from '../../src/domain/folderEvents';
import { RestError, ValidationError } from '../../src/domain/errors';
import { foldEvents } from '../../src/domain/decider';
import { parseStringList } from '../../src/domain/metadata';

const ID = '65f000000000000000000001';
const USER = '65f0000000000000000000aa';
const PARENT = '65f000000000000000000002';
const OTHER = '65f000000000000000000003';
const T0 = '2024-05-01T12:00:00+00:00';
const T1 = '2024-05-01T12:00:01.500000+00:00';
const ACL = { users: [{ id: USER, level: 2 as const, flags: [] }], groups: [] };

const { given } = deciderSpec(folderDecider, () => folderStateFor(ID));

const createdData = (overrides: Partial<FolderCreatedData> = {}): FolderCreatedData => ({
  folderId: ID,
  name: 'Data',
  description: '',
  parentType: 'folder',
  parentId: PARENT,
  creatorId: USER,
  created: T0,
  public: false,
  access: ACL,
  meta: {},
  ...overrides,
});
const created = (overrides: Partial<FolderCreatedData> = {}): FolderEvent => ({
  type: 'FolderCreated',
  data: createdData(overrides),
});
const createCommand = (overrides: Record<string, unknown> = {}) => ({
  type: 'CreateFolder' as const,
  data: {
    folderId: ID,
    name: 'Data',
    description: '',
    parentType: 'folder' as const,
    parentId: PARENT,
    creatorId: USER,
    created: T0,
    public: false,
    access: ACL,
    ...overrides,
  },
});

describe('folder decider', () => {
  describe('CreateFolder', () => {
    it('creates the folder, stripping name and description', () => {
      given([])
        .when(createCommand({ name: '  Data ', description: ' about ' }))
        .then([created({ description: 'about' })]);
    });

    it('records no public field when none is given (user parent)', () => {
      const { public: _omit, ...data } = createdData({ parentType: 'user', parentId: USER });
      given([])
        .when(createCommand({ parentType: 'user', parentId: USER, public: undefined }))
        .then([{ type: 'FolderCreated', data }]);
    });

    it('records the initial metadata, dropping null values', () => {
      given([])
        .when(createCommand({ metadata: { a: 1, b: null, c: { 'd.e': 2 } } }))
        .then([created({ meta: { a: 1, c: { 'd.e': 2 } } })]);
    });

    it('refuses an empty name', () => {
      given([])
        .when(createCommand({ name: '   ' }))
        .thenThrows(new ValidationError('Folder name must not be empty.', 'name'));
    });

    it('refuses invalid metadata keys, so that nothing is created', () => {
      given([])
        .when(createCommand({ metadata: { 'a.b': 1 } }))
        .thenThrows(new ValidationError('Invalid key a.b: keys must not contain the "." character.'));
      given([])
        .when(createCommand({ metadata: { $a: 1 } }))
        .thenThrows(new ValidationError('Invalid key $a: keys must not start with the "$" character.'));
      given([])
        .when(createCommand({ metadata: { '': 1 } }))
        .thenThrows(new ValidationError('Key names must not be empty.'));
    });
  });

  describe('UpdateFolder', () => {
    it('renames, re-describes and always advances updated', () => {
      given([created()])
        .when({ type: 'UpdateFolder', data: { name: ' New ', description: ' d ', now: T1 } })
        .then([{ type: 'FolderUpdated', data: { folderId: ID, name: 'New', description: 'd', updated: T1 } }]);
      given([created()])
        .when({ type: 'UpdateFolder', data: { now: T1 } })
        .then([{ type: 'FolderUpdated', data: { folderId: ID, updated: T1 } }]);
    });

    it('merges metadata with nulls deleting keys', () => {
      given([created({ meta: { a: 1, b: 2 } })])
        .when({ type: 'UpdateFolder', data: { metadata: { b: null, c: 3 }, now: T1 } })
        .then([
          { type: 'FolderUpdated', data: { folderId: ID, updated: T1 } },
          { type: 'FolderMetadataChanged', data: { folderId: ID, meta: { a: 1, c: 3 }, updated: T1 } },
        ]);
    });

    it('ignores empty metadata', () => {
      given([created()])
        .when({ type: 'UpdateFolder', data: { metadata: {}, now: T1 } })
        .then([{ type: 'FolderUpdated', data: { folderId: ID, updated: T1 } }]);
    });

    it('refuses an empty name before looking at the metadata', () => {
      given([created()])
        .when({ type: 'UpdateFolder', data: { name: '', metadata: { 'a.b': 1 }, now: T1 } })
        .thenThrows(new ValidationError('Folder name must not be empty.', 'name'));
    });

    it('refuses invalid metadata keys (nothing of the update is recorded)', () => {
      given([created()])
        .when({ type: 'UpdateFolder', data: { name: 'Fine', metadata: { $x: 1 }, now: T1 } })
        .thenThrows(new ValidationError('Invalid key $x: keys must not start with the "$" character.'));
    });

    it('refuses a folder that does not exist', () => {
      given([])
        .when({ type: 'UpdateFolder', data: { now: T1 } })
        .thenThrows(new RestError(`Invalid folder id (${ID}).`));
    });
  });

  describe('MoveFolder', () => {
    it('moves under another parent', () => {
      given([created()])
        .when({
          type: 'MoveFolder',
          data: { parentType: 'folder', parentId: OTHER, targetPath: [PARENT, OTHER], now: T1 },
        })
        .then([
          {
            type: 'FolderMoved',
            data: {
              folderId: ID,
              fromParentType: 'folder',
              fromParentId: PARENT,
              parentType: 'folder',
              parentId: OTHER,
              updated: T1,
            },
          },
        ]);
      given([created()])
        .when({ type: 'MoveFolder', data: { parentType: 'user', parentId: USER, targetPath: [], now: T1 } })
        .then([
          {
            type: 'FolderMoved',
            data: {
              folderId: ID,
              fromParentType: 'folder',
              fromParentId: PARENT,
              parentType: 'user',
              parentId: USER,
              updated: T1,
            },
          },
        ]);
    });

    it('does nothing when the parent is the current one', () => {
      given([created()])
        .when({ type: 'MoveFolder', data: { parentType: 'folder', parentId: PARENT, targetPath: [PARENT], now: T1 } })
        .then([]);
    });

    it('refuses a move underneath itself', () => {
      const refusal = new ValidationError('You may not move a folder underneath itself.');
      given([created()])
        .when({ type: 'MoveFolder', data: { parentType: 'folder', parentId: ID, targetPath: [ID], now: T1 } })
        .thenThrows(refusal);
      given([created()])
        .when({ type: 'MoveFolder', data: { parentType: 'folder', parentId: OTHER, targetPath: [ID, OTHER], now: T1 } })
        .thenThrows(refusal);
    });

    it('moves from where the last move left it', () => {
      const moved: FolderEvent = {
        type: 'FolderMoved',
        data: {
          folderId: ID,
          fromParentType: 'folder',
          fromParentId: PARENT,
          parentType: 'folder',
          parentId: OTHER,
          updated: T1,
        },
      };
      given([created(), moved])
        .when({ type: 'MoveFolder', data: { parentType: 'folder', parentId: OTHER, targetPath: [OTHER], now: T1 } })
        .then([]);
    });
  });

  describe('SetFolderMetadata', () => {
    it('merges; null deletes unless allowNull', () => {
      given([created({ meta: { a: 1, b: 2 } })])
        .when({ type: 'SetFolderMetadata', data: { metadata: { a: null, c: [1] }, allowNull: false, now: T1 } })
        .then([{ type: 'FolderMetadataChanged', data: { folderId: ID, meta: { b: 2, c: [1] }, updated: T1 } }]);
      given([created({ meta: { a: 1 } })])
        .when({ type: 'SetFolderMetadata', data: { metadata: { a: null }, allowNull: true, now: T1 } })
        .then([{ type: 'FolderMetadataChanged', data: { folderId: ID, meta: { a: null }, updated: T1 } }]);
    });

    it('builds on every earlier change', () => {
      const first: FolderEvent = { type: 'FolderMetadataChanged', data: { folderId: ID, meta: { a: 1 }, updated: T0 } };
      given([created(), first])
        .when({ type: 'SetFolderMetadata', data: { metadata: { b: 2 }, allowNull: false, now: T1 } })
        .then([{ type: 'FolderMetadataChanged', data: { folderId: ID, meta: { a: 1, b: 2 }, updated: T1 } }]);
    });

    it('keeps __proto__ an ordinary key', () => {
      const metadata = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
      const [event] = folderDecider.decide(
        { type: 'SetFolderMetadata', data: { metadata, allowNull: false, now: T1 } },
        foldEvents(folderDecider, [created()]),
      );
      const meta = (event.data as { meta: Record<string, unknown> }).meta;
      expect(Object.keys(meta)).toEqual(['__proto__']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('validates every top-level key of the result, not nested ones', () => {
      given([created()])
        .when({ type: 'SetFolderMetadata', data: { metadata: { ok: { 'x.y': 1, $z: 2 } }, allowNull: false, now: T1 } })
        .then([
          { type: 'FolderMetadataChanged', data: { folderId: ID, meta: { ok: { 'x.y': 1, $z: 2 } }, updated: T1 } },
        ]);
      given([created()])
        .when({ type: 'SetFolderMetadata', data: { metadata: { 'a.b': 1 }, allowNull: false, now: T1 } })
        .thenThrows(new ValidationError('Invalid key a.b: keys must not contain the "." character.'));
      given([created()])
        .when({ type: 'SetFolderMetadata', data: { metadata: { $a: 1 }, allowNull: false, now: T1 } })
        .thenThrows(new ValidationError('Invalid key $a: keys must not start with the "$" character.'));
      given([created()])
        .when({ type: 'SetFolderMetadata', data: { metadata: { '': 1 }, allowNull: false, now: T1 } })
        .thenThrows(new ValidationError('Key names must not be empty.'));
    });

    it('refuses a folder that does not exist', () => {
      given([])
        .when({ type: 'SetFolderMetadata', data: { metadata: { a: 1 }, allowNull: false, now: T1 } })
        .thenThrows(new RestError(`Invalid folder id (${ID}).`));
    });
  });

  describe('DeleteFolderMetadata', () => {
    it('removes the named keys and ignores missing ones', () => {
      given([created({ meta: { a: 1, b: 2 } })])
        .when({ type: 'DeleteFolderMetadata', data: { fields: ['a', 'zz'], now: T1 } })
        .then([{ type: 'FolderMetadataChanged', data: { folderId: ID, meta: { b: 2 }, updated: T1 } }]);
    });

    it('validates the names before deleting', () => {
      given([created({ meta: { a: 1 } })])
        .when({ type: 'DeleteFolderMetadata', data: { fields: ['a', 'x.y'], now: T1 } })
        .thenThrows(new ValidationError('Invalid key x.y: keys must not contain the "." character.'));
      given([created()])
        .when({ type: 'DeleteFolderMetadata', data: { fields: [''], now: T1 } })
        .thenThrows(new ValidationError('Key names must not be empty.'));
      given([created()])
        .when({ type: 'DeleteFolderMetadata', data: { fields: ['$a'], now: T1 } })
        .thenThrows(new ValidationError('Invalid key $a: keys must not start with the "$" character.'));
    });
  });

  describe('SetFolderAccess', () => {
    it('replaces the ACL, and public/publicFlags only when given', () => {
      const access = { users: [{ id: OTHER, level: 1 as const, flags: [] }], groups: [] };
      given([created()])
        .when({ type: 'SetFolderAccess', data: { access } })
        .then([{ type: 'FolderAccessChanged', data: { folderId: ID, access } }]);
      given([created()])
        .when({ type: 'SetFolderAccess', data: { access, public: true, publicFlags: [] } })
        .then([{ type: 'FolderAccessChanged', data: { folderId: ID, access, public: true, publicFlags: [] } }]);
    });

    it('records the actor of a recursive change', () => {
      const actor = { id: USER, admin: false, groups: ['65f0000000000000000000bb'] };
      given([created()])
        .when({ type: 'SetFolderAccess', data: { access: ACL, recurse: { actor } } })
        .then([{ type: 'FolderAccessChanged', data: { folderId: ID, access: ACL, recurse: true, actor } }]);
    });

    it('refuses a folder that does not exist', () => {
      given([])
        .when({ type: 'SetFolderAccess', data: { access: ACL } })
        .thenThrows(new RestError(`Invalid folder id (${ID}).`));
    });
  });

  it('evolves every event into the state the next decision sees', () => {
    const state = foldEvents(folderDecider, [
      created({ meta: { a: 1 } }),
      { type: 'FolderUpdated', data: { folderId: ID, name: 'Renamed', updated: T1 } },
      {
        type: 'FolderMoved',
        data: {
          folderId: ID,
          fromParentType: 'folder',
          fromParentId: PARENT,
          parentType: 'user',
          parentId: USER,
          updated: T1,
        },
      },
      { type: 'FolderAccessChanged', data: { folderId: ID, access: { users: [], groups: [] }, public: true } },
    ]);
    expect(state).toMatchObject({
      exists: true,
      name: 'Renamed',
      parentType: 'user',
      parentId: USER,
      public: true,
      meta: { a: 1 },
      updated: T1,
    });
  });

  it('emits only events that satisfy their published schemas', () => {
    const events = [
      ...folderDecider.decide(createCommand({ metadata: { a: 1 } }), folderStateFor(ID)),
      ...folderDecider.decide(
        { type: 'UpdateFolder', data: { name: 'x', metadata: { b: 1 }, now: T1 } },
        foldEvents(folderDecider, [created()]),
      ),
      ...folderDecider.decide(
        { type: 'MoveFolder', data: { parentType: 'user', parentId: USER, targetPath: [], now: T1 } },
        foldEvents(folderDecider, [created()]),
      ),
      ...folderDecider.decide(
        { type: 'SetFolderAccess', data: { access: ACL, public: false } },
        foldEvents(folderDecider, [created()]),
      ),
    ];
    expect(events.map((e) => e.type)).toEqual([
      'FolderCreated',
      'FolderUpdated',
      'FolderMetadataChanged',
      'FolderMoved',
      'FolderAccessChanged',
    ]);
    for (const event of events) expect(() => folderEventSchemas[event.type].parse(event.data)).not.toThrow();
  });
});

describe('sibling names', () => {
  it('accepts a free name', () => {
    expect(() => refuseTakenSiblingName(null)).not.toThrow();
  });

  it('refuses a name held by a folder or by an item', () => {
    expect(() => refuseTakenSiblingName('folder')).toThrow(
      expect.objectContaining({
        constructor: ValidationError,
        message: 'A folder with that name already exists here.',
        field: 'name',
      }),
    );
    expect(() => refuseTakenSiblingName('item')).toThrow(
      expect.objectContaining({ message: 'An item with that name already exists here.', field: 'name' }),
    );
  });
});

describe('DELETE metadata field list', () => {
  it("renders jsonschema's message", () => {
    expect(parseStringList('fields', ['a'])).toEqual(['a']);
    expect(() => parseStringList('fields', 'foo')).toThrow(
      "Invalid JSON object for parameter fields: 'foo' is not of type 'array'\n\nFailed validating 'type' in schema:\n    {'items': {'type': 'string'}, 'type': 'array'}\n\nOn instance:\n    'foo'",
    );
    expect(() => parseStringList('fields', ['a', 1])).toThrow(
      "Invalid JSON object for parameter fields: 1 is not of type 'string'\n\nFailed validating 'type' in schema['items']:\n    {'type': 'string'}\n\nOn instance[1]:\n    1",
    );
  });
});
