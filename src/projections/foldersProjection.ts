import { projectionOf } from './projection';
import type { FolderEvent } from '../domain/folder';

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
  FolderAccessChanged: (event, tx) => {
    const d = event.data;
    const change = {
      access: d.access,
      ...(d.public !== undefined ? { public: d.public } : {}),
      ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
    };
    if (d.recurse && d.actor) {
      const reached = tx.folders.setAccessRecursive(d.folderId, change, d.actor);
      tx.subtree.recordOps(reached, event.position, 'accessChanged', d.folderId);
    } else tx.folders.update(d.folderId, change);
  },
  FolderDeleted: (event, tx) => {
    const d = event.data;
    // Keep what goes, for restore and the bytes' retention (src/infra/readmodel/sqlite/historyStore.ts).
    tx.history?.keepRemoved(d.folderId, false, event.position, event.metadata.at);
    tx.subtree.deleteFolder(d.folderId, event.position);
  },
  FolderContentsCleared: (event, tx) => {
    const d = event.data;
    tx.history?.keepRemoved(d.folderId, true, event.position, event.metadata.at);
    tx.subtree.clearContents(d.folderId, event.position);
  },
  FolderCopied: (event, tx) => {
    const d = event.data;
    tx.subtree.copyFolder(d, event.position);
  },
  FolderRestored: (event, tx) => {
    const d = event.data;
    // Restore moves back rows only a history-keeping read model has; the command refuses without one.
    if (!tx.history) throw new Error('FolderRestored needs a read model that keeps history (READ_MODEL=sqlite).');
    tx.history.restoreFolder(
      { folderId: d.folderId, deletedPosition: BigInt(d.deletedPosition), parentType: d.parentType, parentId: d.parentId, name: d.name },
      event.position,
    );
  },
});
