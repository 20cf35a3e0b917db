import { planned, projectionOf } from './projection';
import type {
  FolderAccessChangedData,
  FolderContentsClearedData,
  FolderCopiedData,
  FolderDeletedData,
  FolderEvent,
} from '../domain/folderEvents';
import { accessTargets } from './folderAccess';
import { changeOf, createUnder, folderPresent, folderRow, moveInto, parentPresent } from './lateEvents';

/**
 * Folders. Subtree operations (delete, empty, copy, recursive access) are one event each, applied set-wise by the
 * adapter in the event's transaction, which also fills the history index (docs/subtree-operations.md). An event
 * naming a folder a delete already removed (it raced the delete of an ancestor) follows the late-event rule of
 * lateEvents.ts: subtree events in their plan, creations, changes and moves by writes conditional on presence.
 */
export const foldersProjection = projectionOf<FolderEvent>({
  FolderCreated: (event, tx) => {
    const d = event.data;
    createUnder(tx, d.parentType, d.parentId, (tx) =>
      tx.folders.insert({
        _id: d.folderId,
        name: d.name,
        lowerName: d.name.toLowerCase(),
        description: d.description,
        parentCollection: d.parentType,
        parentId: d.parentId,
        creatorId: d.creatorId,
        created: d.created,
        updated: d.created,
        size: 0,
        ...(d.public !== undefined ? { public: d.public } : {}),
        access: d.access,
        meta: d.meta,
      }),
    );
  },
  FolderUpdated: (event, tx) => {
    const d = event.data;
    changeOf(tx, folderRow(d.folderId), (tx) =>
      tx.folders.update(d.folderId, {
        ...(d.name !== undefined ? { name: d.name, lowerName: d.name.toLowerCase() } : {}),
        ...(d.description !== undefined ? { description: d.description } : {}),
        updated: d.updated,
      }),
    );
  },
  FolderMetadataChanged: (event, tx) => {
    const d = event.data;
    changeOf(tx, folderRow(d.folderId), (tx) => tx.folders.update(d.folderId, { meta: d.meta, updated: d.updated }));
  },
  FolderTimestampsSet: (event, tx) => {
    const { folderId, ...times } = event.data;
    changeOf(tx, folderRow(folderId), (tx) => tx.folders.update(folderId, times));
  },
  FolderMoved: (event, tx) => {
    const d = event.data;
    moveInto(tx, folderRow(d.folderId), d, {
      move: (tx) => tx.folders.move(d.folderId, d.parentType, d.parentId, d.updated),
      remove: (tx) => tx.folders.removeSubtree(d.folderId),
    });
  },
  FolderAccessChanged: planned<FolderAccessChangedData, string[]>({
    // Only a recursive change reads: which folders it reaches is decided on the read model as it stands.
    needsPlan: (event) => !!(event.data.recurse && event.data.actor),
    // needsPlan above: planned only with an actor.
    plan: async (event, reads) =>
      event.data.actor ? accessTargets(reads.folders, event.data.folderId, event.data.actor) : [],
    apply: (event, tx, reached) => {
      const d = event.data;
      const change = {
        access: d.access,
        ...(d.public !== undefined ? { public: d.public } : {}),
        ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
      };
      if (reached === null) return changeOf(tx, folderRow(d.folderId), (tx) => tx.folders.update(d.folderId, change));
      // History rows first: on MongoDB without transactions, a replay after an interruption re-plans on folders
      // partly written already, and must not lose the rows of those (src/infra/readmodel/mongodb/writes.ts).
      tx.subtree.recordOps(reached, event.position, 'accessChanged', d.folderId);
      tx.folders.setAccess(reached, change);
    },
  }),
  // Subtree events plan whether their folders are still there: one that lost a race with a delete earlier in log
  // order is skipped (lateEvents.ts); the adapters then work on subtrees that exist.
  FolderDeleted: planned<FolderDeletedData, boolean>({
    plan: (event, reads) => folderPresent(reads, event.data.folderId),
    apply: (event, tx, present) => {
      const d = event.data;
      if (!present) return;
      // Keep what goes, for restore and the bytes' retention (src/infra/readmodel/sqlite/historyStore.ts).
      tx.history.keepRemoved(d.folderId, false, event.position, event.metadata.at);
      tx.subtree.deleteFolder(d.folderId, event.position);
    },
  }),
  FolderContentsCleared: planned<FolderContentsClearedData, boolean>({
    plan: (event, reads) => folderPresent(reads, event.data.folderId),
    apply: (event, tx, present) => {
      const d = event.data;
      if (!present) return;
      tx.history.keepRemoved(d.folderId, true, event.position, event.metadata.at);
      tx.subtree.clearContents(d.folderId, event.position);
    },
  }),
  FolderCopied: planned<FolderCopiedData, boolean>({
    // The source or the destination deleted earlier in log order (a concurrent delete won): nothing is copied, and the
    // new folder never appears (its later events are skipped like those of any folder deleted with an ancestor).
    plan: async (event, reads) =>
      (await folderPresent(reads, event.data.sourceId)) &&
      (await parentPresent(reads, event.data.parentType, event.data.parentId)),
    apply: (event, tx, present) => {
      if (present) tx.subtree.copyFolder(event.data, event.position);
    },
  }),
  // A restore re-creates the folder under its new parent: nothing comes back when a delete took that parent first.
  FolderRestored: (event, tx) => {
    const d = event.data;
    createUnder(tx, d.parentType, d.parentId, (tx) =>
      tx.history.restoreFolder(
        {
          folderId: d.folderId,
          deletedPosition: BigInt(d.deletedPosition),
          parentType: d.parentType,
          parentId: d.parentId,
          name: d.name,
        },
        event.position,
      ),
    );
  },
});
