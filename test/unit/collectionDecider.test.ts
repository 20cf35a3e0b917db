import { deciderSpec } from '../support/givenWhenThen';
import { collectionDecider, type CollectionCommand, type CollectionEvent } from '../../src/domain/collection';

const { given } = deciderSpec(collectionDecider);

const created: CollectionEvent = {
  type: 'CollectionCreated',
  data: {
    collectionId: 'c1',
    name: 'Data',
    description: 'd',
    public: false,
    creatorId: 'u1',
    created: 't0',
    access: { users: [{ id: 'u1', level: 2, flags: [] }], groups: [] },
  },
};
const create = (name: string, nameOwner: string | null = null): CollectionCommand => ({
  type: 'CreateCollection',
  data: { collectionId: 'c1', name, description: ' d ', public: false, creatorId: 'u1', created: 't0', nameOwner },
});

describe('collection decider', () => {
  it('creates with stripped name and description, the creator holding ADMIN', () => {
    given([]).when(create('  Data ')).then([created]);
  });

  it('refuses an empty name, then a name reserved by another collection', () => {
    given([]).when(create('  ', 'c9')).thenRefuses('Collection name must not be empty.');
    given([]).when(create('Data', 'c9')).thenRefuses('A collection with that name already exists.');
  });

  it('renames unless the name belongs to another collection; keeping its own name is fine', () => {
    given([created])
      .when({ type: 'UpdateCollection', data: { name: ' New ', updated: 't1', nameOwner: null } })
      .then([{ type: 'CollectionUpdated', data: { collectionId: 'c1', name: 'New', updated: 't1' } }]);
    given([created])
      .when({ type: 'UpdateCollection', data: { name: 'Data', updated: 't1', nameOwner: 'c1' } })
      .then([{ type: 'CollectionUpdated', data: { collectionId: 'c1', name: 'Data', updated: 't1' } }]);
    given([created])
      .when({ type: 'UpdateCollection', data: { name: 'Taken', updated: 't1', nameOwner: 'c2' } })
      .thenRefuses('A collection with that name already exists.');
  });

  it('replaces the access list, with public and publicFlags only when given', () => {
    const access = { users: [], groups: [] };
    given([created])
      .when({ type: 'SetCollectionAccess', data: { access } })
      .then([{ type: 'CollectionAccessChanged', data: { collectionId: 'c1', access } }]);
    given([created])
      .when({ type: 'SetCollectionAccess', data: { access, public: true, publicFlags: [] } })
      .then([{ type: 'CollectionAccessChanged', data: { collectionId: 'c1', access, public: true, publicFlags: [] } }]);
  });

  it('deletes once, with the name it had', () => {
    const renamed: CollectionEvent = {
      type: 'CollectionUpdated',
      data: { collectionId: 'c1', name: 'Renamed', updated: 't1' },
    };
    given([created, renamed])
      .when({ type: 'DeleteCollection', data: {} })
      .then([{ type: 'CollectionDeleted', data: { collectionId: 'c1', name: 'Renamed' } }]);
    given([created, { type: 'CollectionDeleted', data: { collectionId: 'c1', name: 'Data' } }])
      .when({ type: 'DeleteCollection', data: {} })
      .then([]);
  });

  it("merges and removes metadata with Girder's key rules, refusing a deleted collection", () => {
    given([created])
      .when({ type: 'SetCollectionMetadata', data: { metadata: { a: 1, b: null }, allowNull: false, now: 't1' } })
      .then([{ type: 'CollectionMetadataChanged', data: { collectionId: 'c1', meta: { a: 1 }, updated: 't1' } }]);
    const withMeta: CollectionEvent = {
      type: 'CollectionMetadataChanged',
      data: { collectionId: 'c1', meta: { a: 1, b: 2 }, updated: 't1' },
    };
    given([created, withMeta])
      .when({ type: 'SetCollectionMetadata', data: { metadata: { a: null }, allowNull: true, now: 't2' } })
      .then([
        { type: 'CollectionMetadataChanged', data: { collectionId: 'c1', meta: { a: null, b: 2 }, updated: 't2' } },
      ]);
    given([created, withMeta])
      .when({ type: 'DeleteCollectionMetadata', data: { fields: ['b', 'none'], now: 't2' } })
      .then([{ type: 'CollectionMetadataChanged', data: { collectionId: 'c1', meta: { a: 1 }, updated: 't2' } }]);
    given([created])
      .when({ type: 'SetCollectionMetadata', data: { metadata: { 'a.b': 1 }, allowNull: false, now: 't1' } })
      .thenRefuses('Invalid key a.b: keys must not contain the "." character.');
    given([created, { type: 'CollectionDeleted', data: { collectionId: 'c1', name: 'Data' } }])
      .when({ type: 'DeleteCollectionMetadata', data: { fields: ['a'], now: 't1' } })
      .thenRefuses('Invalid collection id (c1).');
  });

  it('sets its times', () => {
    given([created])
      .when({ type: 'SetCollectionTimestamps', data: { created: 't5', updated: 't6' } })
      .then([{ type: 'CollectionTimestampsSet', data: { collectionId: 'c1', created: 't5', updated: 't6' } }]);
  });
});
