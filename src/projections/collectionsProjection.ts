import { projectionOf } from './projection';
import type { CollectionEvent } from '../domain/collection';

export const collectionsProjection = projectionOf<CollectionEvent>({
  CollectionCreated: (event, tx) => {
    const d = event.data;
    tx.collections.put({
      _id: d.collectionId,
      name: d.name,
      description: d.description,
      public: d.public,
      access: d.access,
      created: d.created,
      updated: d.created,
      size: 0,
      meta: {},
      creatorId: d.creatorId,
    });
  },
  CollectionUpdated: (event, tx) => {
    const d = event.data;
    tx.collections.update(d.collectionId, {
      updated: d.updated,
      ...(d.name !== undefined ? { name: d.name } : {}),
      ...(d.description !== undefined ? { description: d.description } : {}),
    });
  },
  CollectionAccessChanged: (event, tx) => {
    const d = event.data;
    tx.collections.update(d.collectionId, {
      access: d.access,
      ...(d.public !== undefined ? { public: d.public } : {}),
      ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
    });
  },
  CollectionMetadataChanged: (event, tx) => {
    const d = event.data;
    tx.collections.update(d.collectionId, { meta: d.meta, updated: d.updated });
  },
  CollectionTimestampsSet: (event, tx) => {
    const { collectionId, ...times } = event.data;
    tx.collections.update(collectionId, times);
  },
  CollectionDeleted: (event, tx) => {
    const { collectionId } = event.data;
    // Everything under the collection goes with it, set-wise in this one transaction, as a folder delete removes its
    // subtree; the folders it removes get `deleted` history rows with the collection as root. Their bytes are
    // reclaimed after the commit (deleteCollection in src/commands/collectionCommands.ts).
    tx.subtree.deleteUnderRoot('collection', collectionId, event.position);
    tx.collections.delete(collectionId);
  },
});
