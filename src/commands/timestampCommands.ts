import type { Services } from '../services';
import type { RequestMeta } from './requestMeta';
import type { StreamAppend } from '../ports/eventStore';
import { toNewEvents } from './commandRunner';
import { loadFolder } from './folderCommands';
import { loadItemStream } from './itemCommands';
import { decideOn } from '../domain/decider';
import { folderDecider, folderStream } from '../domain/folder';
import { itemDecider, itemStream } from '../domain/item';
import { collectionDecider, collectionStream } from '../domain/collection';
import { groupDecider, groupStream } from '../domain/group';
import { RestError } from '../domain/errors';
import type { DomainEvent } from '../domain/decider';

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
  services: Services,
  target: TimedResource,
  times: Timestamps,
  meta: RequestMeta,
): Promise<void> {
  await services.commands.run(async () => {
    const append = (streamId: string, expected: StreamAppend['expectedState'], events: DomainEvent[]) => ({
      appends: [{ streamId, expectedState: expected, events: toNewEvents(events, meta) }],
      result: undefined,
    });
    switch (target.type) {
      case 'folder': {
        const loaded = await loadFolder(services, target.id);
        const { events } = decideOn(folderDecider, loaded.state, { type: 'SetFolderTimestamps', data: times });
        return append(folderStream(target.id), loaded.expected, events);
      }
      case 'item': {
        const loaded = await loadItemStream(services, target.id);
        const { events } = decideOn(itemDecider, loaded.state, { type: 'SetItemTimestamps', data: times });
        return append(itemStream(target.id), loaded.expected, events);
      }
      case 'file': {
        if (times.created === undefined) return { appends: [], result: undefined };
        const loaded = await loadItemStream(services, target.itemId);
        const { events } = decideOn(itemDecider, loaded.state, {
          type: 'SetFileCreated',
          data: { fileId: target.id, created: times.created },
        });
        return append(itemStream(target.itemId), loaded.expected, events);
      }
      case 'collection': {
        const loaded = await services.commands.load(collectionStream(target.id), collectionDecider);
        if (loaded.state.status !== 'active') throw new RestError(`Invalid collection id (${target.id}).`);
        const { events } = decideOn(collectionDecider, loaded.state, { type: 'SetCollectionTimestamps', data: times });
        return append(collectionStream(target.id), loaded.expected, events);
      }
      case 'group': {
        const loaded = await services.commands.load(groupStream(target.id), groupDecider);
        if (loaded.state.status !== 'active') throw new RestError(`Invalid group id (${target.id}).`);
        const { events } = decideOn(groupDecider, loaded.state, { type: 'SetGroupTimestamps', data: times });
        return append(groupStream(target.id), loaded.expected, events);
      }
    }
  });
}
