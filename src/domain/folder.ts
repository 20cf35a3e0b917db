import { type Decider, unknownEvent } from './decider';
import { copyAccess, type AccessList, type Viewer } from './access';
import { RestError, ValidationError } from './errors';
import { mergeMetadata, removeMetadataKeys, type Metadata } from './metadata';
import type { ParentType } from './parents';
import { folderEventSchemas, type FolderCopiedData, type FolderEvent, type FolderRestoredData } from './folderEvents';

/*
 * The folder decider: its state, the commands it takes and the rules that turn them into events. The events
 * themselves (the published contract) are declared in folderEvents.ts.
 */

/** The stream of one folder's own events. */
export const folderStream = (id: string): string => `folder-${id}`;

/** Re-exported for the event-schema route (src/http/resources/events.ts), which reads every decider's schemas here. */

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
    case 'FolderTimestampsSet':
      return event.data.updated !== undefined ? { ...state, updated: event.data.updated } : state;
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
  | { type: 'SetFolderTimestamps'; data: { created?: string; updated?: string } }
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
    case 'SetFolderTimestamps':
      requireExisting(state);
      return [{ type: 'FolderTimestampsSet', data: { folderId: state.folderId, ...command.data } }];
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
