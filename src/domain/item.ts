import { type Decider, unknownEvent } from './decider';
import { RestError, ValidationError } from './errors';
import { hasOwnKey, ownValue } from './ownMap';
import { mergeMetadata, removeMetadataKeys, type Metadata } from './metadata';
import { itemEventSchemas, type FileRecord, type ItemEvent } from './itemEvents';

/**
 * Items and their files. One stream per item (`item-<id>`) holds the item's events and its files' events: the item
 * owns the invariants that span its files (an item's size is the sum of its files' sizes, a file belongs to one live
 * item), and a file command conflicts with a concurrent delete of its item on that one stream.
 */
export const itemStream = (id: string): string => `item-${id}`;

/** Re-exported for the event-schema route (src/http/resources/events.ts), which reads every decider's schemas here. */
export { itemEventSchemas };
/** A file as the item's state holds it (the same record its events carry). */
export type { FileRecord };

// ---- rules ----

/** Girder's File.validate: `exts` are the lower-cased parts of the name after its first dot. */
export const extensionsOf = (name: string): string[] =>
  name
    .split('.')
    .slice(1)
    .map((ext) => ext.toLowerCase());

/** Girder's Item.validate: the stripped name must not be empty. */
export function checkItemName(name: string): string {
  const stripped = name.trim();
  if (!stripped) throw new ValidationError('Item name must not be empty.', 'name');
  return stripped;
}

/** Girder's item auto-rename: `name`, then `name (1)`, `name (2)`, … */
export const renamedCandidate = (name: string, n: number): string => (n === 0 ? name : `${name} (${n})`);

// ---- state ----

export interface ItemState {
  exists: boolean;
  itemId: string;
  folderId: string;
  name: string;
  description: string;
  meta: Metadata;
  size: number;
  creatorId: string | null;
  created: string;
  updated: string;
  /** The item's files by id, in creation order. */
  files: Record<string, FileRecord>;
}

const initialState = (): ItemState => ({
  exists: false,
  itemId: '',
  folderId: '',
  name: '',
  description: '',
  meta: {},
  size: 0,
  creatorId: null,
  created: '',
  updated: '',
  files: {},
});

/** The decider's initial state for a known id, so refusals name the item (`Invalid item id (<id>).`). */
export const itemStateFor = (itemId: string): ItemState => ({ ...initialState(), itemId });

const withoutFile = (files: Record<string, FileRecord>, fileId: string) =>
  Object.fromEntries(Object.entries(files).filter(([id]) => id !== fileId));

function evolve(state: ItemState, event: ItemEvent): ItemState {
  switch (event.type) {
    case 'ItemCreated': {
      const d = event.data;
      return {
        exists: true,
        itemId: d.itemId,
        folderId: d.folderId,
        name: d.name,
        description: d.description,
        meta: d.meta,
        size: 0,
        creatorId: d.creatorId,
        created: d.created,
        updated: d.created,
        files: {},
      };
    }
    case 'ItemUpdated': {
      const d = event.data;
      return {
        ...state,
        ...(d.name !== undefined ? { name: d.name } : {}),
        ...(d.description !== undefined ? { description: d.description } : {}),
        updated: d.updated,
      };
    }
    case 'ItemMoved':
      return { ...state, folderId: event.data.folderId, name: event.data.name, updated: event.data.updated };
    case 'ItemMetadataChanged':
      return { ...state, meta: event.data.meta, updated: event.data.updated };
    case 'ItemCopied':
      return state;
    case 'ItemDeleted':
      return { ...initialState(), itemId: state.itemId };
    case 'FileCreated': {
      const { itemId: _itemId, ...file } = event.data;
      return { ...state, size: state.size + file.size, files: { ...state.files, [file.fileId]: file } };
    }
    case 'FileContentsReplaced': {
      const d = event.data;
      const file = ownValue(state.files, d.fileId);
      if (!file) return state;
      // The old bytes' hash goes with them: the new one is the event's, or none.
      const { sha512: _previous, ...rest } = file;
      return {
        ...state,
        size: state.size - file.size + d.size,
        files: {
          ...state.files,
          [d.fileId]: {
            ...rest,
            blobId: d.blobId,
            size: d.size,
            creatorId: d.creatorId,
            created: d.created,
            ...(d.sha512 !== undefined ? { sha512: d.sha512 } : {}),
          },
        },
      };
    }
    case 'FileHashComputed': {
      const file = ownValue(state.files, event.data.fileId);
      if (!file) return state;
      return { ...state, files: { ...state.files, [file.fileId]: { ...file, sha512: event.data.sha512 } } };
    }
    case 'FileMoved': {
      const d = event.data;
      const file = ownValue(state.files, d.fileId);
      if (!file) return state;
      const { sha512: _previous, ...rest } = file;
      const sha512 = d.sha512 ?? file.sha512;
      return {
        ...state,
        files: {
          ...state.files,
          [d.fileId]: { ...rest, blobId: d.blobId, ...(sha512 !== undefined ? { sha512 } : {}) },
        },
      };
    }
    case 'FileUpdated': {
      const d = event.data;
      const file = ownValue(state.files, d.fileId);
      if (!file) return state;
      const name = d.name ?? file.name;
      const changed = {
        ...file,
        name,
        exts: extensionsOf(name),
        ...(d.mimeType !== undefined ? { mimeType: d.mimeType } : {}),
      };
      return { ...state, files: { ...state.files, [d.fileId]: changed } };
    }
    case 'FileCopied':
      return state;
    case 'ItemTimestampsSet': {
      const { created, updated } = event.data;
      return { ...state, ...(created !== undefined ? { created } : {}), ...(updated !== undefined ? { updated } : {}) };
    }
    case 'FileTimestampsSet': {
      const file = ownValue(state.files, event.data.fileId);
      if (!file) return state;
      return { ...state, files: { ...state.files, [file.fileId]: { ...file, created: event.data.created } } };
    }
    case 'FileDeleted': {
      const file = ownValue(state.files, event.data.fileId);
      if (!file) return state;
      return { ...state, size: state.size - file.size, files: withoutFile(state.files, event.data.fileId) };
    }
    default:
      return unknownEvent(event, state);
  }
}

// ---- commands ----

export type ItemCommand =
  | {
      type: 'CreateItem';
      data: {
        itemId: string;
        folderId: string;
        /** The name to record: already stripped and made unique among the folder's children by the command handler. */
        name: string;
        description: string;
        creatorId: string | null;
        created: string;
        /** Metadata given at creation, merged into `{}` as `setMetadata` would (nulls dropped), then validated. */
        metadata?: Metadata;
        /** Metadata copied verbatim (copies). */
        meta?: Metadata;
        copyOfItem?: string;
      };
    }
  | { type: 'UpdateItem'; data: { name?: string; description?: string; now: string } }
  | { type: 'MoveItem'; data: { folderId: string; name: string; now: string } }
  | { type: 'SetItemMetadata'; data: { metadata: Metadata; allowNull: boolean; now: string } }
  | { type: 'DeleteItemMetadata'; data: { fields: string[]; now: string } }
  | { type: 'RecordCopy'; data: { copyItemId: string } }
  | { type: 'DeleteItem'; data: Record<string, never> }
  | { type: 'AddFile'; data: { file: FileRecord } }
  | {
      type: 'ReplaceFileContents';
      data: {
        fileId: string;
        blobId: string;
        size: number;
        sha512?: string;
        creatorId: string | null;
        created: string;
      };
    }
  /** Records the SHA-512 computed from the bytes `blobId` of a file that has none. */
  | { type: 'RecordFileHash'; data: { fileId: string; blobId: string; sha512: string } }
  /**
   * The file's bytes, copied into another assetstore as `blobId`; refused when the file no longer has the bytes
   * `fromBlobId` that were copied (its contents were replaced meanwhile).
   */
  | { type: 'MoveFile'; data: { fileId: string; fromBlobId: string; blobId: string; sha512: string } }
  /** Girder's updateFile: the name (stripped by the route; empty is refused) and/or the MIME type. */
  | { type: 'UpdateFile'; data: { fileId: string; name?: string; mimeType?: string } }
  | { type: 'SetItemTimestamps'; data: { created?: string; updated?: string } }
  | { type: 'SetFileCreated'; data: { fileId: string; created: string } }
  | { type: 'RecordFileCopy'; data: { fileId: string; copyFileId: string; toItemId: string } }
  | { type: 'DeleteFile'; data: { fileId: string } };

function requireExisting(state: ItemState): void {
  if (!state.exists) throw new RestError(`Invalid item id (${state.itemId}).`);
}

function requireFile(state: ItemState, fileId: string): FileRecord {
  requireExisting(state);
  const file = ownValue(state.files, fileId);
  if (!file) throw new RestError(`Invalid file id (${fileId}).`);
  return file;
}

function decide(command: ItemCommand, state: ItemState): ItemEvent[] {
  switch (command.type) {
    case 'CreateItem': {
      const d = command.data;
      if (state.exists) throw new RestError(`Item ${d.itemId} already exists.`, 409);
      const name = checkItemName(d.name);
      const meta = d.meta
        ? structuredClone(d.meta)
        : d.metadata && Object.keys(d.metadata).length > 0
          ? mergeMetadata({}, d.metadata, false)
          : {};
      return [
        {
          type: 'ItemCreated',
          data: {
            itemId: d.itemId,
            folderId: d.folderId,
            name,
            description: d.description.trim(),
            creatorId: d.creatorId,
            created: d.created,
            meta,
            ...(d.copyOfItem !== undefined ? { copyOfItem: d.copyOfItem } : {}),
          },
        },
      ];
    }
    case 'UpdateItem': {
      requireExisting(state);
      const d = command.data;
      return [
        {
          type: 'ItemUpdated',
          data: {
            itemId: state.itemId,
            ...(d.name !== undefined ? { name: checkItemName(d.name) } : {}),
            ...(d.description !== undefined ? { description: d.description.trim() } : {}),
            updated: d.now,
          },
        },
      ];
    }
    case 'MoveItem': {
      requireExisting(state);
      const d = command.data;
      if (d.folderId === state.folderId) return [];
      return [
        {
          type: 'ItemMoved',
          data: {
            itemId: state.itemId,
            fromFolderId: state.folderId,
            folderId: d.folderId,
            name: checkItemName(d.name),
            updated: d.now,
          },
        },
      ];
    }
    case 'SetItemMetadata': {
      requireExisting(state);
      const d = command.data;
      return [
        {
          type: 'ItemMetadataChanged',
          data: { itemId: state.itemId, meta: mergeMetadata(state.meta, d.metadata, d.allowNull), updated: d.now },
        },
      ];
    }
    case 'DeleteItemMetadata': {
      requireExisting(state);
      const d = command.data;
      return [
        {
          type: 'ItemMetadataChanged',
          data: { itemId: state.itemId, meta: removeMetadataKeys(state.meta, d.fields), updated: d.now },
        },
      ];
    }
    case 'RecordCopy':
      requireExisting(state);
      return [{ type: 'ItemCopied', data: { itemId: state.itemId, copyItemId: command.data.copyItemId } }];
    case 'DeleteItem':
      requireExisting(state);
      return [
        {
          type: 'ItemDeleted',
          data: {
            itemId: state.itemId,
            folderId: state.folderId,
            name: state.name,
            files: Object.values(state.files).map((f) => ({ fileId: f.fileId, blobId: f.blobId, size: f.size })),
          },
        },
      ];
    case 'AddFile': {
      requireExisting(state);
      const file = command.data.file;
      if (hasOwnKey(state.files, file.fileId)) throw new RestError(`File ${file.fileId} already exists.`, 409);
      if (!file.name) throw new ValidationError('File name must not be empty.', 'name');
      return [{ type: 'FileCreated', data: { ...file, exts: extensionsOf(file.name), itemId: state.itemId } }];
    }
    case 'ReplaceFileContents': {
      const d = command.data;
      const file = requireFile(state, d.fileId);
      return [
        {
          type: 'FileContentsReplaced',
          data: {
            itemId: state.itemId,
            fileId: d.fileId,
            blobId: d.blobId,
            size: d.size,
            previousBlobId: file.blobId,
            previousSize: file.size,
            creatorId: d.creatorId,
            created: d.created,
            ...(d.sha512 !== undefined ? { sha512: d.sha512 } : {}),
          },
        },
      ];
    }
    case 'MoveFile': {
      const d = command.data;
      const file = requireFile(state, d.fileId);
      if (file.blobId !== d.fromBlobId)
        throw new RestError('The file was changed while its bytes were moved; try again.', 409);
      return [
        {
          type: 'FileMoved',
          data: {
            itemId: state.itemId,
            fileId: d.fileId,
            blobId: d.blobId,
            previousBlobId: file.blobId,
            sha512: d.sha512,
          },
        },
      ];
    }
    case 'RecordFileHash': {
      const d = command.data;
      const file = requireFile(state, d.fileId);
      // Nothing to record when the file has its hash already, or when its bytes were replaced while the old ones were
      // being hashed (the replacement carries the new bytes' hash).
      if (file.sha512 !== undefined || file.blobId !== d.blobId) return [];
      return [
        {
          type: 'FileHashComputed',
          data: { itemId: state.itemId, fileId: d.fileId, blobId: d.blobId, sha512: d.sha512 },
        },
      ];
    }
    case 'UpdateFile': {
      const d = command.data;
      requireFile(state, d.fileId);
      // Girder's File.validate, run on every save.
      if (d.name !== undefined && !d.name) throw new ValidationError('File name must not be empty.', 'name');
      return [
        {
          type: 'FileUpdated',
          data: {
            itemId: state.itemId,
            fileId: d.fileId,
            ...(d.name !== undefined ? { name: d.name } : {}),
            ...(d.mimeType !== undefined ? { mimeType: d.mimeType } : {}),
          },
        },
      ];
    }
    case 'SetItemTimestamps':
      requireExisting(state);
      return [{ type: 'ItemTimestampsSet', data: { itemId: state.itemId, ...command.data } }];
    case 'SetFileCreated':
      requireFile(state, command.data.fileId);
      return [{ type: 'FileTimestampsSet', data: { itemId: state.itemId, ...command.data } }];
    case 'RecordFileCopy': {
      const d = command.data;
      requireFile(state, d.fileId);
      return [{ type: 'FileCopied', data: { itemId: state.itemId, ...d } }];
    }
    case 'DeleteFile': {
      const file = requireFile(state, command.data.fileId);
      return [
        {
          type: 'FileDeleted',
          data: { itemId: state.itemId, fileId: file.fileId, blobId: file.blobId, size: file.size },
        },
      ];
    }
  }
}

export const itemDecider: Decider<ItemState, ItemCommand, ItemEvent> = {
  initialState,
  evolve,
  decide,
  eventSchemas: itemEventSchemas,
};
