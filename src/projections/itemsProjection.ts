import type { Projection } from './projection';
import type {
  FileContentsReplacedData,
  FileCreatedData,
  FileDeletedData,
  ItemCreatedData,
  ItemDeletedData,
  ItemMetadataChangedData,
  ItemMovedData,
  ItemUpdatedData,
} from '../domain/item';

/**
 * Items and files. Sizes travel as deltas (`tx.items.addSize`): the adapter adds them to the item, its folder and its
 * root, which it knows and the event does not (folders move).
 */
export const itemsProjection: Projection = {
  handlers: {
    ItemCreated: (event, tx) => {
      const d = event.data as ItemCreatedData;
      tx.items.insert({
        _id: d.itemId, name: d.name, description: d.description, folderId: d.folderId, creatorId: d.creatorId, created: d.created,
        updated: d.created, meta: d.meta, ...(d.copyOfItem !== undefined ? { copyOfItem: d.copyOfItem } : {}),
      });
    },
    ItemUpdated: (event, tx) => {
      const d = event.data as ItemUpdatedData;
      tx.items.update(d.itemId, {
        ...(d.name !== undefined ? { name: d.name } : {}),
        ...(d.description !== undefined ? { description: d.description } : {}),
        updated: d.updated,
      });
    },
    ItemMoved: (event, tx) => {
      const d = event.data as ItemMovedData;
      tx.items.move(d.itemId, d.folderId, d.name, d.updated);
    },
    ItemMetadataChanged: (event, tx) => {
      const d = event.data as ItemMetadataChangedData;
      tx.items.update(d.itemId, { meta: d.meta, updated: d.updated });
    },
    ItemDeleted: (event, tx) => tx.items.delete((event.data as ItemDeletedData).itemId),
    FileCreated: (event, tx) => {
      const { itemId, fileId, ...file } = event.data as FileCreatedData;
      tx.files.insert({ _id: fileId, itemId, ...file });
      tx.items.addSize(itemId, file.size);
    },
    FileContentsReplaced: (event, tx) => {
      const d = event.data as FileContentsReplacedData;
      tx.files.update(d.fileId, { blobId: d.blobId, size: d.size, creatorId: d.creatorId, created: d.created });
      tx.items.addSize(d.itemId, d.size - d.previousSize);
    },
    FileDeleted: (event, tx) => {
      const d = event.data as FileDeletedData;
      tx.files.delete(d.fileId);
      tx.items.addSize(d.itemId, -d.size);
    },
  },
};
