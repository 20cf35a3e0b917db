import type { Projection } from './projection';
import type { FolderCreatedData } from '../domain/folder';

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
  },
};
