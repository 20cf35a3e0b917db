import { projectionOf } from './projection';
import type { ItemEvent } from '../domain/itemEvents';
import { changeOf, createUnder, itemRow, moveInto } from './lateEvents';

/**
 * Items and files. Sizes travel as deltas (`tx.items.addSize`): the adapter adds them to the item, its folder and its
 * root, which it knows and the event does not (folders move). An event naming an item, or a folder, that a delete
 * earlier in log order removed follows the late-event rule (lateEvents.ts); a file's events are changes of its item.
 */
export const itemsProjection = projectionOf<ItemEvent>({
  ItemCreated: (event, tx) => {
    const d = event.data;
    createUnder(tx, 'folder', d.folderId, (tx) =>
      tx.items.insert({
        _id: d.itemId,
        name: d.name,
        description: d.description,
        folderId: d.folderId,
        creatorId: d.creatorId,
        created: d.created,
        updated: d.created,
        meta: d.meta,
        ...(d.copyOfItem !== undefined ? { copyOfItem: d.copyOfItem } : {}),
      }),
    );
  },
  ItemUpdated: (event, tx) => {
    const d = event.data;
    changeOf(tx, itemRow(d.itemId), (tx) =>
      tx.items.update(d.itemId, {
        ...(d.name !== undefined ? { name: d.name } : {}),
        ...(d.description !== undefined ? { description: d.description } : {}),
        updated: d.updated,
      }),
    );
  },
  ItemMoved: (event, tx) => {
    const d = event.data;
    moveInto(
      tx,
      itemRow(d.itemId),
      { parentType: 'folder', parentId: d.folderId },
      {
        move: (tx) => tx.items.move(d.itemId, d.folderId, d.name, d.updated),
        remove: (tx) => tx.items.delete(d.itemId),
      },
    );
  },
  ItemMetadataChanged: (event, tx) => {
    const d = event.data;
    changeOf(tx, itemRow(d.itemId), (tx) => tx.items.update(d.itemId, { meta: d.meta, updated: d.updated }));
  },
  // The copy's own ItemCreated (on the copy's stream) carries everything the read model needs.
  ItemCopied: () => undefined,
  // Deleting what is gone already removes nothing: no guard needed.
  ItemDeleted: (event, tx) => tx.items.delete(event.data.itemId),
  FileCreated: (event, tx) => {
    const { itemId, fileId, ...file } = event.data;
    changeOf(tx, itemRow(itemId), (tx) => {
      tx.files.insert({ _id: fileId, itemId, ...file });
      tx.items.addSize(itemId, file.size);
    });
  },
  FileContentsReplaced: (event, tx) => {
    const d = event.data;
    changeOf(tx, itemRow(d.itemId), (tx) => {
      // `sha512: undefined` (an event recorded before hashes were kept) removes the old bytes' hash.
      tx.files.update(d.fileId, {
        blobId: d.blobId,
        size: d.size,
        creatorId: d.creatorId,
        created: d.created,
        sha512: d.sha512,
      });
      tx.items.addSize(d.itemId, d.size - d.previousSize);
    });
  },
  FileHashComputed: (event, tx) => {
    const d = event.data;
    changeOf(tx, itemRow(d.itemId), (tx) => tx.files.update(d.fileId, { sha512: d.sha512 }));
  },
  FileMoved: (event, tx) => {
    const d = event.data;
    changeOf(tx, itemRow(d.itemId), (tx) =>
      tx.files.update(d.fileId, { blobId: d.blobId, ...(d.sha512 !== undefined ? { sha512: d.sha512 } : {}) }),
    );
  },
  FileUpdated: (event, tx) => {
    const d = event.data;
    // The adapters recompute `exts` from a changed name.
    changeOf(tx, itemRow(d.itemId), (tx) =>
      tx.files.update(d.fileId, {
        ...(d.name !== undefined ? { name: d.name } : {}),
        ...(d.mimeType !== undefined ? { mimeType: d.mimeType } : {}),
      }),
    );
  },
  ItemTimestampsSet: (event, tx) => {
    const { itemId, ...times } = event.data;
    changeOf(tx, itemRow(itemId), (tx) => tx.items.update(itemId, times));
  },
  FileTimestampsSet: (event, tx) => {
    const d = event.data;
    changeOf(tx, itemRow(d.itemId), (tx) => tx.files.update(d.fileId, { created: d.created }));
  },
  // The copy's own FileCreated (on the destination item's stream) carries everything the read model needs.
  FileCopied: () => undefined,
  FileDeleted: (event, tx) => {
    const d = event.data;
    changeOf(tx, itemRow(d.itemId), (tx) => {
      tx.files.delete(d.fileId);
      tx.items.addSize(d.itemId, -d.size);
    });
  },
});
