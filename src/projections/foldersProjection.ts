import { planned, projectionOf } from './projection';
import type { FolderAccessChangedData, FolderEvent } from '../domain/folder';
import { accessTargets } from './folderAccess';

/**
 * Folders. Subtree operations (delete, empty, copy, recursive access) are one event each, applied set-wise by the
 * adapter in the event's transaction, which also fills the history index (docs/subtree-operations.md). A write that
 * names a folder a subtree delete already removed (it raced the delete of an ancestor) is skipped by the adapter.
 */
export const foldersProjection = projectionOf<FolderEvent>({
  FolderCreated: (event, tx) => {
    const d = event.data;
    tx.folders.insert({
      _id: d.folderId, name: d.name, lowerName: d.name.toLowerCase(), description: d.description,
      parentCollection: d.parentType, parentId: d.parentId, creatorId: d.creatorId, created: d.created,
      updated: d.created, size: 0, ...(d.public !== undefined ? { public: d.public } : {}), access: d.access, meta: d.meta,
    });
  },
  FolderUpdated: (event, tx) => {
    const d = event.data;
    tx.folders.update(d.folderId, {
      ...(d.name !== undefined ? { name: d.name, lowerName: d.name.toLowerCase() } : {}),
      ...(d.description !== undefined ? { description: d.description } : {}),
      updated: d.updated,
    });
  },
  FolderMetadataChanged: (event, tx) => {
    const d = event.data;
    tx.folders.update(d.folderId, { meta: d.meta, updated: d.updated });
  },
  FolderMoved: (event, tx) => {
    const d = event.data;
    tx.folders.move(d.folderId, d.parentType, d.parentId, d.updated);
  },
  FolderAccessChanged: planned<FolderAccessChangedData, string[]>({
    // Only a recursive change reads: which folders it reaches is decided on the read model as it stands.
    needsPlan: (event) => !!(event.data.recurse && event.data.actor),
    plan: (event, reads) => accessTargets(reads.folders, event.data.folderId, event.data.actor!),
    apply: (event, tx, reached) => {
      const d = event.data;
      const change = {
        access: d.access,
        ...(d.public !== undefined ? { public: d.public } : {}),
        ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
      };
      if (reached === null) return tx.folders.update(d.folderId, change);
      // History rows first: on MongoDB without transactions, a replay after an interruption re-plans on folders
      // partly written already, and must not lose the rows of those (src/infra/readmodel/mongodb/writes.ts).
      tx.subtree.recordOps(reached, event.position, 'accessChanged', d.folderId);
      tx.folders.setAccess(reached, change);
    },
  }),
  FolderDeleted: (event, tx) => {
    const d = event.data;
    // Keep what goes, for restore and the bytes' retention (src/infra/readmodel/sqlite/historyStore.ts).
    tx.history.keepRemoved(d.folderId, false, event.position, event.metadata.at);
    tx.subtree.deleteFolder(d.folderId, event.position);
  },
  FolderContentsCleared: (event, tx) => {
    const d = event.data;
    tx.history.keepRemoved(d.folderId, true, event.position, event.metadata.at);
    tx.subtree.clearContents(d.folderId, event.position);
  },
  FolderCopied: (event, tx) => {
    const d = event.data;
    tx.subtree.copyFolder(d, event.position);
  },
  FolderRestored: (event, tx) => {
    const d = event.data;
    tx.history.restoreFolder(
      { folderId: d.folderId, deletedPosition: BigInt(d.deletedPosition), parentType: d.parentType, parentId: d.parentId, name: d.name },
      event.position,
    );
  },
});
