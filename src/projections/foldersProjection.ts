import type { Projection } from './projection';
import type {
  FolderAccessChangedData,
  FolderCreatedData,
  FolderMetadataChangedData,
  FolderMovedData,
  FolderUpdatedData,
} from '../domain/folder';

export const foldersProjection: Projection = {
  handlers: {
    FolderCreated: (event, tx) => {
      const d = event.data as FolderCreatedData;
      tx.folders.insert({
        _id: d.folderId, name: d.name, lowerName: d.name.toLowerCase(), description: d.description,
        parentCollection: d.parentType, parentId: d.parentId, creatorId: d.creatorId, created: d.created,
        updated: d.created, size: 0, ...(d.public !== undefined ? { public: d.public } : {}), access: d.access, meta: d.meta,
      });
    },
    FolderUpdated: (event, tx) => {
      const d = event.data as FolderUpdatedData;
      tx.folders.update(d.folderId, {
        ...(d.name !== undefined ? { name: d.name, lowerName: d.name.toLowerCase() } : {}),
        ...(d.description !== undefined ? { description: d.description } : {}),
        updated: d.updated,
      });
    },
    FolderMetadataChanged: (event, tx) => {
      const d = event.data as FolderMetadataChangedData;
      tx.folders.update(d.folderId, { meta: d.meta, updated: d.updated });
    },
    FolderMoved: (event, tx) => {
      const d = event.data as FolderMovedData;
      tx.folders.move(d.folderId, d.parentType, d.parentId, d.updated);
    },
    FolderAccessChanged: (event, tx) => {
      const d = event.data as FolderAccessChangedData;
      const change = {
        access: d.access,
        ...(d.public !== undefined ? { public: d.public } : {}),
        ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
      };
      if (d.recurse && d.actor) tx.folders.setAccessRecursive(d.folderId, change, d.actor);
      else tx.folders.update(d.folderId, change);
    },
  },
};
