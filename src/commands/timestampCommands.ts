import type { RequestMeta } from './requestMeta';
import { loadFolder } from './folderCommands';
import { loadItemStream } from './itemCommands';
import { collectionDecider, collectionStream } from '../domain/collection';
import { groupDecider, groupStream } from '../domain/group';
import { RestError } from '../domain/errors';
import type { StreamDeps } from './writeDeps';

/** A resource whose times `PUT /resource/:id/timestamp` sets: its type, id, and for a file the item holding it. */
export type TimedResource =
  { type: 'folder' | 'item' | 'collection' | 'group'; id: string } | { type: 'file'; id: string; itemId: string };

/** The new times (Girder's rendering), each only when given. */
export interface Timestamps {
  created?: string;
  updated?: string;
}

/**
 * `PUT /resource/:id/timestamp` (Girder's setTimestamp): one `<Type>TimestampsSet` event on the resource's stream (a
 * file's on its item's). A file has no updated time: the route refuses one before coming here.
 */
export async function setTimestamps(
  deps: StreamDeps,
  target: TimedResource,
  times: Timestamps,
  meta: RequestMeta,
): Promise<void> {
  await deps.commands.handleGroup(meta, async (attempt) => {
    switch (target.type) {
      case 'folder': {
        const folder = await loadFolder(deps, attempt, target.id);
        folder.decide({ type: 'SetFolderTimestamps', data: times });
        return { append: [folder], result: undefined };
      }
      case 'item': {
        const item = await loadItemStream(deps, attempt, target.id);
        item.decide({ type: 'SetItemTimestamps', data: times });
        return { append: [item], result: undefined };
      }
      case 'file': {
        if (times.created === undefined) return { append: [], result: undefined };
        const item = await loadItemStream(deps, attempt, target.itemId);
        item.decide({ type: 'SetFileCreated', data: { fileId: target.id, created: times.created } });
        return { append: [item], result: undefined };
      }
      case 'collection': {
        const collection = await attempt.load(collectionStream(target.id), collectionDecider);
        if (collection.state.status !== 'active') throw new RestError(`Invalid collection id (${target.id}).`);
        collection.decide({ type: 'SetCollectionTimestamps', data: times });
        return { append: [collection], result: undefined };
      }
      case 'group': {
        const group = await attempt.load(groupStream(target.id), groupDecider);
        if (group.state.status !== 'active') throw new RestError(`Invalid group id (${target.id}).`);
        group.decide({ type: 'SetGroupTimestamps', data: times });
        return { append: [group], result: undefined };
      }
    }
  });
}
