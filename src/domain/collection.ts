import { type Decider, type DomainEvent, unknownEvent } from './decider';
import { AccessLevel, emptyAccess, withUserAccess, type AccessList } from './access';
import { ValidationError } from './errors';

export const collectionStream = (id: string): string => `collection-${id}`;

export interface CollectionCreatedData {
  collectionId: string;
  name: string;
  description: string;
  public: boolean;
  creatorId: string | null;
  created: string;
  access: AccessList;
}

export interface CollectionUpdatedData {
  collectionId: string;
  name?: string;
  description?: string;
  updated: string;
}

export interface CollectionAccessChangedData {
  collectionId: string;
  access: AccessList;
  public?: boolean;
  publicFlags?: string[];
}

export type CollectionEvent =
  | DomainEvent<'CollectionCreated', CollectionCreatedData>
  | DomainEvent<'CollectionUpdated', CollectionUpdatedData>
  | DomainEvent<'CollectionAccessChanged', CollectionAccessChangedData>
  | DomainEvent<'CollectionDeleted', { collectionId: string; name: string }>;

export type CollectionState =
  | { status: 'none' }
  | { status: 'active' | 'deleted'; id: string; name: string; description: string; public: boolean; access: AccessList };

/**
 * `nameOwner` is the id holding the requested name's reservation stream (`collectionname-…`) as loaded in the same
 * attempt: the command appends against that stream's revision, so two writers cannot both see the name free.
 */
export type CollectionCommand =
  | {
      type: 'CreateCollection';
      collectionId: string;
      name: string;
      description: string;
      public: boolean;
      creatorId: string | null;
      created: string;
      nameOwner: string | null;
    }
  | { type: 'UpdateCollection'; name?: string; description?: string; updated: string; nameOwner: string | null }
  | { type: 'SetCollectionAccess'; access: AccessList; public?: boolean; publicFlags?: string[] }
  | { type: 'DeleteCollection' };

/** Girder's Collection.validate: the name is stripped, must not be empty, and must be unused by another collection. */
function checkName(name: string, nameOwner: string | null, selfId: string): string {
  const stripped = name.trim();
  if (!stripped) throw new ValidationError('Collection name must not be empty.', 'name');
  if (nameOwner !== null && nameOwner !== selfId) throw new ValidationError('A collection with that name already exists.', 'name');
  return stripped;
}

const gone = (id: string) => new Error(`Collection ${id} does not exist.`);

export const collectionDecider: Decider<CollectionState, CollectionCommand, CollectionEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'CollectionCreated': {
        const d = event.data;
        return { status: 'active', id: d.collectionId, name: d.name, description: d.description, public: d.public, access: d.access };
      }
      case 'CollectionUpdated':
        if (state.status === 'none') return state;
        return {
          ...state,
          ...(event.data.name !== undefined ? { name: event.data.name } : {}),
          ...(event.data.description !== undefined ? { description: event.data.description } : {}),
        };
      case 'CollectionAccessChanged':
        if (state.status === 'none') return state;
        return { ...state, access: event.data.access, ...(event.data.public !== undefined ? { public: event.data.public } : {}) };
      case 'CollectionDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' };
      default:
        return unknownEvent(event, state);
    }
  },
  decide: (command, state) => {
    switch (command.type) {
      case 'CreateCollection': {
        if (state.status !== 'none') throw new Error(`Collection ${command.collectionId} already exists.`);
        const name = checkName(command.name, command.nameOwner, command.collectionId);
        const access = command.creatorId ? withUserAccess(emptyAccess(), command.creatorId, AccessLevel.ADMIN) : emptyAccess();
        return [
          {
            type: 'CollectionCreated',
            data: {
              collectionId: command.collectionId, name, description: command.description.trim(), public: command.public,
              creatorId: command.creatorId, created: command.created, access,
            },
          },
        ];
      }
      case 'UpdateCollection': {
        if (state.status !== 'active') throw gone(state.status === 'none' ? '(unknown)' : state.id);
        const data: CollectionUpdatedData = { collectionId: state.id, updated: command.updated };
        if (command.name !== undefined) data.name = checkName(command.name, command.nameOwner, state.id);
        if (command.description !== undefined) data.description = command.description.trim();
        return [{ type: 'CollectionUpdated', data }];
      }
      case 'SetCollectionAccess': {
        if (state.status !== 'active') throw gone(state.status === 'none' ? '(unknown)' : state.id);
        const data: CollectionAccessChangedData = { collectionId: state.id, access: command.access };
        if (command.public !== undefined) data.public = command.public;
        if (command.publicFlags !== undefined) data.publicFlags = command.publicFlags;
        return [{ type: 'CollectionAccessChanged', data }];
      }
      case 'DeleteCollection':
        if (state.status !== 'active') return [];
        return [{ type: 'CollectionDeleted', data: { collectionId: state.id, name: state.name } }];
    }
  },
};
