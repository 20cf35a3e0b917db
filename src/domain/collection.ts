import { z } from 'zod';
import { type Decider, type DomainEvent, unknownEvent } from './decider';
import { AccessLevel, accessListSchema, emptyAccess, withUserAccess, type AccessList } from './access';
import { RestError, ValidationError } from './errors';
import { mergeMetadata, removeMetadataKeys, type Metadata } from './metadata';

export const collectionStream = (id: string): string => `collection-${id}`;

// ---- events: zod schemas, checked before every append (the data shapes are those already in existing logs) ----

const CollectionCreatedSchema = z.object({
  collectionId: z.string(),
  name: z.string(),
  description: z.string(),
  public: z.boolean(),
  creatorId: z.string().nullable(),
  created: z.string(),
  access: accessListSchema,
});

/** Name and/or description replaced (when given); `updated` always advances. */
const CollectionUpdatedSchema = z.object({
  collectionId: z.string(),
  name: z.string().optional(),
  description: z.string().optional(),
  updated: z.string(),
});

/** The ACL was replaced; `public`/`publicFlags` are present when they were set too. */
const CollectionAccessChangedSchema = z.object({
  collectionId: z.string(),
  access: accessListSchema,
  public: z.boolean().optional(),
  publicFlags: z.array(z.string()).optional(),
});

/** The collection's metadata after a change (`PUT`/`DELETE /collection/:id/metadata`): the complete resulting object. */
const CollectionMetadataChangedSchema = z.object({
  collectionId: z.string(),
  meta: z.record(z.string(), z.unknown()),
  updated: z.string(),
});

/** `PUT /resource/:id/timestamp` (site administrators): the created and/or updated time replaced, as given. */
const CollectionTimestampsSetSchema = z.object({
  collectionId: z.string(),
  created: z.string().optional(),
  updated: z.string().optional(),
});

/** The collection and everything under it are gone (applied set-wise by the projection); `name` is released. */
const CollectionDeletedSchema = z.object({ collectionId: z.string(), name: z.string() });

const collectionEventSchemas = {
  CollectionCreated: CollectionCreatedSchema,
  CollectionUpdated: CollectionUpdatedSchema,
  CollectionAccessChanged: CollectionAccessChangedSchema,
  CollectionMetadataChanged: CollectionMetadataChangedSchema,
  CollectionTimestampsSet: CollectionTimestampsSetSchema,
  CollectionDeleted: CollectionDeletedSchema,
} as const;

type CollectionCreatedData = z.infer<typeof CollectionCreatedSchema>;
type CollectionUpdatedData = z.infer<typeof CollectionUpdatedSchema>;
type CollectionAccessChangedData = z.infer<typeof CollectionAccessChangedSchema>;
type CollectionMetadataChangedData = z.infer<typeof CollectionMetadataChangedSchema>;
type CollectionTimestampsSetData = z.infer<typeof CollectionTimestampsSetSchema>;
type CollectionDeletedData = z.infer<typeof CollectionDeletedSchema>;

export type CollectionEvent =
  | DomainEvent<'CollectionCreated', CollectionCreatedData>
  | DomainEvent<'CollectionUpdated', CollectionUpdatedData>
  | DomainEvent<'CollectionAccessChanged', CollectionAccessChangedData>
  | DomainEvent<'CollectionMetadataChanged', CollectionMetadataChangedData>
  | DomainEvent<'CollectionTimestampsSet', CollectionTimestampsSetData>
  | DomainEvent<'CollectionDeleted', CollectionDeletedData>;

export type CollectionState =
  | { status: 'none' }
  | {
      status: 'active' | 'deleted';
      id: string;
      name: string;
      description: string;
      public: boolean;
      access: AccessList;
      meta: Metadata;
    };

/**
 * `nameOwner` is the id holding the requested name's reservation stream (`collectionname-…`) as loaded in the same
 * attempt: the command appends against that stream's revision, so two writers cannot both see the name free.
 */
export type CollectionCommand =
  | {
      type: 'CreateCollection';
      data: {
        collectionId: string;
        name: string;
        description: string;
        public: boolean;
        creatorId: string | null;
        created: string;
        nameOwner: string | null;
      };
    }
  | {
      type: 'UpdateCollection';
      data: { name?: string; description?: string; updated: string; nameOwner: string | null };
    }
  | { type: 'SetCollectionAccess'; data: { access: AccessList; public?: boolean; publicFlags?: string[] } }
  /** Girder's Collection.setMetadata: merge (nulls delete keys unless `allowNull`), then every key is validated. */
  | { type: 'SetCollectionMetadata'; data: { metadata: Metadata; allowNull: boolean; now: string } }
  | { type: 'DeleteCollectionMetadata'; data: { fields: string[]; now: string } }
  | { type: 'SetCollectionTimestamps'; data: { created?: string; updated?: string } }
  | { type: 'DeleteCollection'; data: Record<string, never> };

/** Girder's Collection.validate: the name is stripped, must not be empty, and must be unused by another collection. */
function checkName(name: string, nameOwner: string | null, selfId: string): string {
  const stripped = name.trim();
  if (!stripped) throw new ValidationError('Collection name must not be empty.', 'name');
  if (nameOwner !== null && nameOwner !== selfId)
    throw new ValidationError('A collection with that name already exists.', 'name');
  return stripped;
}

const gone = (state: CollectionState) =>
  new RestError(`Invalid collection id (${state.status === 'none' ? '(unknown)' : state.id}).`);

export const collectionDecider: Decider<CollectionState, CollectionCommand, CollectionEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'CollectionCreated': {
        const d = event.data;
        return {
          status: 'active',
          id: d.collectionId,
          name: d.name,
          description: d.description,
          public: d.public,
          access: d.access,
          meta: {},
        };
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
        return {
          ...state,
          access: event.data.access,
          ...(event.data.public !== undefined ? { public: event.data.public } : {}),
        };
      case 'CollectionTimestampsSet':
        return state;
      case 'CollectionMetadataChanged':
        return state.status === 'none' ? state : { ...state, meta: event.data.meta };
      case 'CollectionDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' };
      default:
        return unknownEvent(event, state);
    }
  },
  decide: (command, state) => {
    switch (command.type) {
      case 'CreateCollection': {
        const d = command.data;
        if (state.status !== 'none') throw new RestError(`Collection ${d.collectionId} already exists.`, 409);
        const name = checkName(d.name, d.nameOwner, d.collectionId);
        const access = d.creatorId ? withUserAccess(emptyAccess(), d.creatorId, AccessLevel.ADMIN) : emptyAccess();
        return [
          {
            type: 'CollectionCreated',
            data: {
              collectionId: d.collectionId,
              name,
              description: d.description.trim(),
              public: d.public,
              creatorId: d.creatorId,
              created: d.created,
              access,
            },
          },
        ];
      }
      case 'UpdateCollection': {
        if (state.status !== 'active') throw gone(state);
        const d = command.data;
        const data: CollectionUpdatedData = { collectionId: state.id, updated: d.updated };
        if (d.name !== undefined) data.name = checkName(d.name, d.nameOwner, state.id);
        if (d.description !== undefined) data.description = d.description.trim();
        return [{ type: 'CollectionUpdated', data }];
      }
      case 'SetCollectionAccess': {
        if (state.status !== 'active') throw gone(state);
        const d = command.data;
        const data: CollectionAccessChangedData = { collectionId: state.id, access: d.access };
        if (d.public !== undefined) data.public = d.public;
        if (d.publicFlags !== undefined) data.publicFlags = d.publicFlags;
        return [{ type: 'CollectionAccessChanged', data }];
      }
      case 'SetCollectionMetadata': {
        if (state.status !== 'active') throw gone(state);
        const d = command.data;
        const meta = mergeMetadata(state.meta, d.metadata, d.allowNull);
        return [{ type: 'CollectionMetadataChanged', data: { collectionId: state.id, meta, updated: d.now } }];
      }
      case 'DeleteCollectionMetadata': {
        if (state.status !== 'active') throw gone(state);
        const d = command.data;
        const meta = removeMetadataKeys(state.meta, d.fields);
        return [{ type: 'CollectionMetadataChanged', data: { collectionId: state.id, meta, updated: d.now } }];
      }
      case 'SetCollectionTimestamps':
        if (state.status !== 'active') throw gone(state);
        return [{ type: 'CollectionTimestampsSet', data: { collectionId: state.id, ...command.data } }];
      case 'DeleteCollection':
        if (state.status !== 'active') return [];
        return [{ type: 'CollectionDeleted', data: { collectionId: state.id, name: state.name } }];
    }
  },
  eventSchemas: collectionEventSchemas,
};
