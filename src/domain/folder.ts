import { z } from 'zod';
import { type Decider, type DomainEvent, unknownEvent } from './decider';
import { accessListSchema, copyAccess, type AccessList, type Viewer } from './access';
import { RestError, ValidationError } from './errors';
import { mergeMetadata, removeMetadataKeys, type Metadata } from './metadata';
import { PARENT_TYPES, type ParentType } from './parents';

export const folderStream = (id: string): string => `folder-${id}`;

/**
 * Every folder move appends one event to this stream with its expected revision, so moves are serialised: a move
 * checks "the new parent is not underneath me" against a read model that reflects every earlier move (it waits for
 * this stream's last position first), and two concurrent moves cannot both pass that check and form a cycle.
 */
export const FOLDER_TREE_STREAM = 'foldertree-moves';

// ---- events: the zod schemas are the published contract for subscribers ----

const parentTypeSchema = z.enum(PARENT_TYPES);
export const metadataSchema = z.record(z.string(), z.unknown());

/** A folder came into being under a parent, with its ACL (already inherited) and its initial metadata. */
export const FolderCreatedSchema = z.object({
  folderId: z.string(),
  name: z.string(),
  description: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
  creatorId: z.string().nullable(),
  created: z.string(),
  /** Absent for a folder created under a user without an explicit `public` (Girder stores no field then). */
  public: z.boolean().optional(),
  access: accessListSchema,
  meta: metadataSchema,
});

/** `PUT /folder/:id`: name and/or description replaced (when given); `updated` always advances. */
export const FolderUpdatedSchema = z.object({
  folderId: z.string(),
  name: z.string().optional(),
  description: z.string().optional(),
  updated: z.string(),
});

/** The folder's metadata after a change (set, merge or key removal): the complete resulting object. */
export const FolderMetadataChangedSchema = z.object({
  folderId: z.string(),
  meta: metadataSchema,
  updated: z.string(),
});

/** The folder (with its whole subtree) now lives under another parent. */
export const FolderMovedSchema = z.object({
  folderId: z.string(),
  fromParentType: parentTypeSchema,
  fromParentId: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
  updated: z.string(),
});

/** Who acted, as far as access rules go (recorded so that applying an event never depends on later state). */
export const actorSchema = z.object({ id: z.string(), admin: z.boolean(), groups: z.array(z.string()) });

/**
 * The folder's ACL was replaced; `public`/`publicFlags` are present when they were set too. `updated` is unchanged.
 * With `recurse`, the same policy also applies to every descendant folder reachable through folders on which `actor`
 * holds ADMIN (others and their subtrees are skipped), as the read model stands when the event is applied.
 */
export const FolderAccessChangedSchema = z.object({
  folderId: z.string(),
  access: accessListSchema,
  public: z.boolean().optional(),
  publicFlags: z.array(z.string()).optional(),
  recurse: z.literal(true).optional(),
  actor: actorSchema.optional(),
});

/**
 * `DELETE /folder/:id`: the folder and its whole subtree (every descendant folder, not permission filtered, with their
 * items and files) are gone. One event for the whole subtree: the projection removes it set-wise in one read-model
 * transaction (docs/subtree-operations.md). `opId` names the operation (history index, logs).
 */
export const FolderDeletedSchema = z.object({
  folderId: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
  name: z.string(),
  opId: z.string(),
});

/**
 * `DELETE /folder/:id/contents`: every item and subfolder under the folder is gone (set-wise, as for a delete); the
 * folder stays, with size 0 and its `updated` unchanged.
 */
export const FolderContentsClearedSchema = z.object({
  folderId: z.string(),
  opId: z.string(),
});

/**
 * `POST /folder/:id/copy`, on the stream of the **new** folder: everything the new root folder is (its name already
 * made unique among its new siblings, ACL inherited from the new parent plus the copier's ADMIN, the source's metadata
 * and publicFlags). The projection copies the rest set-wise in the same transaction, judged on the read model as it
 * stands when the event is applied: every item of each copied folder (files reference the same blobs), and the
 * subfolders `copier` may READ, recursively; each copied subfolder inherits `public ?? false` and `access` from the new
 * root. Ids of the copies are derived from `opId` and the source ids, so a rebuild produces the same ids.
 */
export const FolderCopiedSchema = z.object({
  opId: z.string(),
  sourceId: z.string(),
  folderId: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
  name: z.string(),
  description: z.string(),
  /** Absent when the copy lands under a user with no explicit `public` and the source has none. */
  public: z.boolean().optional(),
  publicFlags: z.array(z.string()).optional(),
  access: accessListSchema,
  creatorId: z.string(),
  created: z.string(),
  meta: metadataSchema,
  copier: actorSchema,
});

/**
 * `POST /folder/:id/restore`: a folder removed by a subtree operation (its own FolderDeleted, a delete of an ancestor
 * or the clearing of an ancestor, recorded at log position `deletedPosition`) is back, with everything that operation
 * removed below it, under `parentType/parentId` and named `name` (renamed `name (n)` on a collision there). The rest
 * is the folder as it was when it was removed, so that the event alone restores the decider state. The projection
 * moves the removed rows back set-wise from where it kept them (docs/events.md).
 */
export const FolderRestoredSchema = z.object({
  folderId: z.string(),
  opId: z.string(),
  /** Log position (decimal) of the operation that removed the folder. */
  deletedPosition: z.string().regex(/^\d+$/),
  parentType: parentTypeSchema,
  parentId: z.string(),
  name: z.string(),
  description: z.string(),
  public: z.boolean().optional(),
  publicFlags: z.array(z.string()).optional(),
  access: accessListSchema,
  meta: metadataSchema,
  creatorId: z.string().nullable(),
  created: z.string(),
  updated: z.string(),
});

/** The marker appended to {@link FOLDER_TREE_STREAM} by every move. */
export const FolderTreeChangedSchema = z.object({
  folderId: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
});

export const folderEventSchemas = {
  FolderCreated: FolderCreatedSchema,
  FolderUpdated: FolderUpdatedSchema,
  FolderMetadataChanged: FolderMetadataChangedSchema,
  FolderMoved: FolderMovedSchema,
  FolderAccessChanged: FolderAccessChangedSchema,
  FolderDeleted: FolderDeletedSchema,
  FolderContentsCleared: FolderContentsClearedSchema,
  FolderCopied: FolderCopiedSchema,
  FolderRestored: FolderRestoredSchema,
} as const;

export type FolderCreatedData = z.infer<typeof FolderCreatedSchema>;
export type FolderUpdatedData = z.infer<typeof FolderUpdatedSchema>;
export type FolderMetadataChangedData = z.infer<typeof FolderMetadataChangedSchema>;
export type FolderMovedData = z.infer<typeof FolderMovedSchema>;
export type FolderAccessChangedData = z.infer<typeof FolderAccessChangedSchema>;
export type FolderDeletedData = z.infer<typeof FolderDeletedSchema>;
export type FolderContentsClearedData = z.infer<typeof FolderContentsClearedSchema>;
export type FolderCopiedData = z.infer<typeof FolderCopiedSchema>;
export type FolderRestoredData = z.infer<typeof FolderRestoredSchema>;

export type FolderEvent =
  | DomainEvent<'FolderCreated', FolderCreatedData>
  | DomainEvent<'FolderUpdated', FolderUpdatedData>
  | DomainEvent<'FolderMetadataChanged', FolderMetadataChangedData>
  | DomainEvent<'FolderMoved', FolderMovedData>
  | DomainEvent<'FolderAccessChanged', FolderAccessChangedData>
  | DomainEvent<'FolderDeleted', FolderDeletedData>
  | DomainEvent<'FolderContentsCleared', FolderContentsClearedData>
  | DomainEvent<'FolderCopied', FolderCopiedData>
  | DomainEvent<'FolderRestored', FolderRestoredData>;

// ---- state ----

export interface FolderState {
  exists: boolean;
  /** The folder was deleted (FolderDeleted on its own stream): every command refuses it, as for an unknown id. */
  deleted?: boolean;
  folderId: string;
  name: string;
  description: string;
  parentType: ParentType;
  parentId: string;
  public?: boolean;
  publicFlags?: string[];
  access: AccessList;
  meta: Metadata;
  updated: string;
}

const initialState = (): FolderState => ({
  exists: false,
  folderId: '',
  name: '',
  description: '',
  parentType: 'folder',
  parentId: '',
  access: { users: [], groups: [] },
  meta: {},
  updated: '',
});

/** The state of a folder that a copy or a restore puts in place whole, last changed at `updated`. */
function standing(d: FolderCopiedData | FolderRestoredData, updated: string): FolderState {
  return {
    exists: true,
    folderId: d.folderId,
    name: d.name,
    description: d.description,
    parentType: d.parentType,
    parentId: d.parentId,
    ...(d.public !== undefined ? { public: d.public } : {}),
    ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
    access: d.access,
    meta: d.meta,
    updated,
  };
}

function evolve(state: FolderState, event: FolderEvent): FolderState {
  switch (event.type) {
    case 'FolderCreated': {
      const d = event.data;
      return {
        exists: true,
        folderId: d.folderId,
        name: d.name,
        description: d.description,
        parentType: d.parentType,
        parentId: d.parentId,
        ...(d.public !== undefined ? { public: d.public } : {}),
        access: d.access,
        meta: d.meta,
        updated: d.created,
      };
    }
    case 'FolderUpdated': {
      const d = event.data;
      return {
        ...state,
        ...(d.name !== undefined ? { name: d.name } : {}),
        ...(d.description !== undefined ? { description: d.description } : {}),
        updated: d.updated,
      };
    }
    case 'FolderMetadataChanged':
      return { ...state, meta: event.data.meta, updated: event.data.updated };
    case 'FolderMoved':
      return {
        ...state,
        parentType: event.data.parentType,
        parentId: event.data.parentId,
        updated: event.data.updated,
      };
    case 'FolderAccessChanged': {
      const d = event.data;
      return {
        ...state,
        access: d.access,
        ...(d.public !== undefined ? { public: d.public } : {}),
        ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
      };
    }
    case 'FolderDeleted':
      return { ...initialState(), folderId: state.folderId || event.data.folderId, deleted: true };
    case 'FolderContentsCleared':
      return state;
    case 'FolderCopied':
      return standing(event.data, event.data.created);
    case 'FolderRestored':
      return standing(event.data, event.data.updated);
    default:
      return unknownEvent(event, state);
  }
}

// ---- commands ----

export type FolderCommand =
  | {
      type: 'CreateFolder';
      data: {
        folderId: string;
        name: string;
        description: string;
        parentType: ParentType;
        parentId: string;
        creatorId: string | null;
        created: string;
        public?: boolean;
        access: AccessList;
        /** Metadata given at creation: merged into `{}` as `setMetadata` would (nulls dropped), then validated. */
        metadata?: Metadata;
      };
    }
  | { type: 'UpdateFolder'; data: { name?: string; description?: string; metadata?: Metadata; now: string } }
  | {
      type: 'MoveFolder';
      data: {
        parentType: ParentType;
        parentId: string;
        /** The new parent's folder path: its folder ancestors and itself when it is a folder (empty for a
         * user/collection). */
        targetPath: string[];
        now: string;
      };
    }
  | { type: 'SetFolderMetadata'; data: { metadata: Metadata; allowNull: boolean; now: string } }
  | { type: 'DeleteFolderMetadata'; data: { fields: string[]; now: string } }
  | {
      type: 'SetFolderAccess';
      /** `recurse`: the caller (`actor`) applies the policy to the subtree as well. */
      data: { access: AccessList; public?: boolean; publicFlags?: string[]; recurse?: { actor: Viewer } };
    }
  | { type: 'DeleteFolder'; data: { opId: string } }
  | { type: 'ClearFolderContents'; data: { opId: string } }
  | {
      type: 'CopyFolder';
      /**
       * Creates this (new) folder as a copy of `sourceId`; `name` is the final name (already made unique among the new
       * siblings by the command handler), `access`/`public` already inherited, `meta`/`publicFlags` the source's.
       */
      data: FolderCopiedData;
    }
  | {
      type: 'RestoreFolder';
      /**
       * Brings the folder back as it was when the operation at `deletedPosition` removed it (`snapshot`, as kept by the
       * read model), under the given parent with the given (already unique) name. `removedWithAncestor`: the command
       * handler found it removed by an operation on an ancestor, which its own stream does not record.
       */
      data: {
        opId: string;
        deletedPosition: bigint;
        removedWithAncestor: boolean;
        parentType: ParentType;
        parentId: string;
        name: string;
        snapshot: {
          description: string;
          public?: boolean;
          publicFlags?: string[];
          access: AccessList;
          meta: Metadata;
          creatorId: string | null;
          created: string;
          updated: string;
        };
      };
    };

/** Girder's Folder.validate: the stripped name must not be empty. */
export const checkFolderName = (name: string): string => {
  const stripped = name.trim();
  if (!stripped) throw new ValidationError('Folder name must not be empty.', 'name');
  return stripped;
};
const checkName = checkFolderName;

/** Girder's rename on collision (`createFolder(..., allowRename=True)`, used by copies): `name`, `name (1)`, `name
 * (2)`, … */
export const folderNameCandidate = (name: string, n: number): string => (n === 0 ? name : `${name} (${n})`);

function requireExisting(state: FolderState): void {
  if (!state.exists) throw new RestError(`Invalid folder id (${state.folderId}).`);
}

function decide(command: FolderCommand, state: FolderState): FolderEvent[] {
  switch (command.type) {
    case 'CreateFolder': {
      const d = command.data;
      if (state.exists || state.deleted) throw new RestError(`Folder ${d.folderId} already exists.`, 409);
      const name = checkName(d.name);
      const meta = d.metadata && Object.keys(d.metadata).length > 0 ? mergeMetadata({}, d.metadata, false) : {};
      return [
        {
          type: 'FolderCreated',
          data: {
            folderId: d.folderId,
            name,
            description: d.description.trim(),
            parentType: d.parentType,
            parentId: d.parentId,
            creatorId: d.creatorId,
            created: d.created,
            ...(d.public !== undefined ? { public: d.public } : {}),
            access: d.access,
            meta,
          },
        },
      ];
    }
    case 'UpdateFolder': {
      requireExisting(state);
      const d = command.data;
      const events: FolderEvent[] = [
        {
          type: 'FolderUpdated',
          data: {
            folderId: state.folderId,
            ...(d.name !== undefined ? { name: checkName(d.name) } : {}),
            ...(d.description !== undefined ? { description: d.description.trim() } : {}),
            updated: d.now,
          },
        },
      ];
      if (d.metadata && Object.keys(d.metadata).length > 0) {
        events.push({
          type: 'FolderMetadataChanged',
          data: { folderId: state.folderId, meta: mergeMetadata(state.meta, d.metadata, false), updated: d.now },
        });
      }
      return events;
    }
    case 'MoveFolder': {
      requireExisting(state);
      const d = command.data;
      if (d.parentType === state.parentType && d.parentId === state.parentId) return [];
      if (d.targetPath.includes(state.folderId))
        throw new ValidationError('You may not move a folder underneath itself.');
      return [
        {
          type: 'FolderMoved',
          data: {
            folderId: state.folderId,
            fromParentType: state.parentType,
            fromParentId: state.parentId,
            parentType: d.parentType,
            parentId: d.parentId,
            updated: d.now,
          },
        },
      ];
    }
    case 'SetFolderMetadata': {
      requireExisting(state);
      const d = command.data;
      return [
        {
          type: 'FolderMetadataChanged',
          data: { folderId: state.folderId, meta: mergeMetadata(state.meta, d.metadata, d.allowNull), updated: d.now },
        },
      ];
    }
    case 'DeleteFolderMetadata': {
      requireExisting(state);
      const d = command.data;
      return [
        {
          type: 'FolderMetadataChanged',
          data: { folderId: state.folderId, meta: removeMetadataKeys(state.meta, d.fields), updated: d.now },
        },
      ];
    }
    case 'SetFolderAccess': {
      requireExisting(state);
      const d = command.data;
      return [
        {
          type: 'FolderAccessChanged',
          data: {
            folderId: state.folderId,
            access: d.access,
            ...(d.public !== undefined ? { public: d.public } : {}),
            ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
            ...(d.recurse
              ? {
                  recurse: true as const,
                  actor: { id: d.recurse.actor.id, admin: d.recurse.actor.admin, groups: [...d.recurse.actor.groups] },
                }
              : {}),
          },
        },
      ];
    }
    case 'DeleteFolder':
      requireExisting(state);
      return [
        {
          type: 'FolderDeleted',
          data: {
            folderId: state.folderId,
            parentType: state.parentType,
            parentId: state.parentId,
            name: state.name,
            opId: command.data.opId,
          },
        },
      ];
    case 'ClearFolderContents':
      requireExisting(state);
      return [{ type: 'FolderContentsCleared', data: { folderId: state.folderId, opId: command.data.opId } }];
    case 'CopyFolder': {
      const d = command.data;
      if (state.exists || state.deleted) throw new RestError(`Folder ${d.folderId} already exists.`, 409);
      if (d.sourceId === d.folderId) throw new RestError('A folder copy needs a new id.');
      return [
        {
          type: 'FolderCopied',
          data: {
            opId: d.opId,
            sourceId: d.sourceId,
            folderId: d.folderId,
            parentType: d.parentType,
            parentId: d.parentId,
            name: checkName(d.name),
            description: d.description.trim(),
            ...(d.public !== undefined ? { public: d.public } : {}),
            ...(d.publicFlags !== undefined ? { publicFlags: [...d.publicFlags] } : {}),
            access: copyAccess(d.access),
            creatorId: d.creatorId,
            created: d.created,
            meta: structuredClone(d.meta),
            copier: { id: d.copier.id, admin: d.copier.admin, groups: [...d.copier.groups] },
          },
        },
      ];
    }
    case 'RestoreFolder': {
      const d = command.data;
      if (!state.deleted && !d.removedWithAncestor) throw new RestError('The folder is not deleted.');
      const s = d.snapshot;
      return [
        {
          type: 'FolderRestored',
          data: {
            folderId: state.folderId,
            opId: d.opId,
            deletedPosition: d.deletedPosition.toString(),
            parentType: d.parentType,
            parentId: d.parentId,
            name: checkName(d.name),
            description: s.description,
            ...(s.public !== undefined ? { public: s.public } : {}),
            ...(s.publicFlags !== undefined ? { publicFlags: [...s.publicFlags] } : {}),
            access: copyAccess(s.access),
            meta: structuredClone(s.meta),
            creatorId: s.creatorId,
            created: s.created,
            updated: s.updated,
          },
        },
      ];
    }
  }
}

/**
 * The state of a folder that has no creation event of its own: a descendant created by a subtree copy (FolderCopied
 * on the new root's stream) exists only in the read model until its own stream records something. Its state is the
 * read model's document, taken once the read model reflects the folder's stream (see src/commands/folderCommands.ts).
 */
export function folderStateFromDoc(doc: {
  _id: string;
  name: string;
  description: string;
  parentCollection: ParentType;
  parentId: string;
  public?: boolean;
  publicFlags?: string[];
  access: AccessList;
  meta: Metadata;
  updated: string;
}): FolderState {
  return {
    exists: true,
    folderId: doc._id,
    name: doc.name,
    description: doc.description,
    parentType: doc.parentCollection,
    parentId: doc.parentId,
    ...(doc.public !== undefined ? { public: doc.public } : {}),
    ...(doc.publicFlags !== undefined ? { publicFlags: [...doc.publicFlags] } : {}),
    access: copyAccess(doc.access),
    meta: structuredClone(doc.meta),
    updated: doc.updated,
  };
}

export const folderDecider: Decider<FolderState, FolderCommand, FolderEvent> = {
  initialState,
  evolve,
  decide,
  eventSchemas: folderEventSchemas,
};

/** The decider's initial state for a known id, so refusals name the folder (`Invalid folder id (<id>).`). */
export const folderStateFor = (folderId: string): FolderState => ({ ...initialState(), folderId });

// ---- sibling names ----

/**
 * Girder's sibling-name rule (field `name`): a name another folder or an item already holds under the same parent is
 * refused. What holds it comes from the read model through the name's reservation stream, which serialises the
 * writers (src/commands/siblingNames.ts).
 */
export function refuseTakenSiblingName(takenBy: 'folder' | 'item' | null): void {
  if (takenBy === 'folder') throw new ValidationError('A folder with that name already exists here.', 'name');
  if (takenBy === 'item') throw new ValidationError('An item with that name already exists here.', 'name');
}
