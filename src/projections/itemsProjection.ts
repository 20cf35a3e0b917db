import { projectionOf } from './projection';
import type { ItemEvent } from '../domain/item';

/**
 * Items and files. Sizes travel as deltas (`tx.items.addSize`): the adapter adds them to the item, its folder and its
 * root, which it knows and the event does not (folders move).
 */
export const itemsProjection = projectionOf<ItemEvent>({
  ItemCreated: (event, tx) => {
    const d = event.data;
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
    });
  },
  ItemUpdated: (event, tx) => {
    const d = event.data;
    tx.items.update(d.itemId, {
      ...(d.name !== undefined ? { name: d.name } : {}),
      ...(d.description !== undefined ? { description: d.description } : {}),
      updated: d.updated,
    });
  },
  ItemMoved: (event, tx) => {
    const d = event.data;
    tx.items.move(d.itemId, d.folderId, d.name, d.updated);
  },
  ItemMetadataChanged: (event, tx) => {
    const d = event.data;
    tx.items.update(d.itemId, { meta: d.meta, updated: d.updated });
  },
  // The copy's own ItemCreated (on the copy's stream) carries everything the read model needs.
  ItemCopied: () => undefined,
  ItemDeleted: (event, tx) => tx.items.delete(event.data.itemId),
  FileCreated: (event, tx) => {
    const { itemId, fileId, ...file } = event.data;
    tx.files.insert({ _id: fileId, itemId, ...file });
    tx.items.addSize(itemId, file.size);
  },
  FileContentsReplaced: (event, tx) => {
    const d = event.data;
    tx.files.update(d.fileId, { blobId: d.blobId, size: d.size, creatorId: d.creatorId, created: d.created });
    tx.items.addSize(d.itemId, d.size - d.previousSize);
  },
  FileDeleted: (event, tx) => {
    const d = event.data;
    tx.files.delete(d.fileId);
    tx.items.addSize(d.itemId, -d.size);
  },
});
