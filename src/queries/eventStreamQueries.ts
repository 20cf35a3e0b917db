import type { EventStore, RecordedEvent } from '../ports/eventStore';
import { AccessLevel, hasAccess, type Viewer } from '../domain/access';
import { RestError } from '../domain/errors';
import { folderAclNowOrLast } from './history';
import type { LogDeps, ReadModelDeps } from './readDeps';

/**
 * Read-side functions of the event streams (src/http/resources/events.ts): where a stream starts and which events a
 * caller may see, judged at delivery against the read model (and, for what it no longer has, the log).
 */

type Deps = ReadModelDeps<'folders' | 'items' | 'users' | 'history' | 'subtree'> & LogDeps;

/**
 * Where a stream starts: after the position a client resumes from (`Last-Event-ID` or `since`), else the head (only
 * what happens next). A position past the head of the log names no event this stream could resume after: refused
 * (400), not waited for.
 */
export async function startPosition(
  deps: { eventStore: Pick<EventStore, 'headPosition'> },
  resumeFrom: string | undefined,
): Promise<bigint> {
  if (resumeFrom === undefined || resumeFrom === '') return deps.eventStore.headPosition();
  if (!/^\d+$/.test(resumeFrom)) throw new RestError(`Invalid value for since: "${resumeFrom}". Expected a position.`);
  const position = BigInt(resumeFrom);
  const head = await deps.eventStore.headPosition();
  if (position > head)
    throw new RestError(`Invalid value for since: "${resumeFrom}". The log ends at position ${head}.`);
  return position;
}

/** The folder an event is about: a folder stream's folder, an item event's folder (now or as it was last known). */
async function folderOfEvent(deps: Deps, event: RecordedEvent): Promise<string | null> {
  if (event.streamId.startsWith('folder-')) return event.streamId.slice('folder-'.length);
  if (!event.streamId.startsWith('item-')) return null;
  const itemId = event.streamId.slice('item-'.length);
  const data = event.data as { folderId?: string };
  if (typeof data.folderId === 'string') return data.folderId;
  const live = await deps.readModel.items.get(itemId);
  if (live) return live.folderId;
  return (await deps.readModel.history.removedItem(itemId))?.doc.folderId ?? null;
}

/** Whether `folderId` is `rootId` or below it: in the read model now, or (once removed) through the parent it had. */
async function isInSubtree(deps: Deps, rootId: string, folderId: string, depth = 0): Promise<boolean> {
  if (folderId === rootId) return true;
  if (await deps.readModel.folders.get(folderId)) return deps.readModel.folders.isSelfOrDescendant(rootId, folderId);
  const removed = await deps.readModel.history.removedFolder(folderId);
  if (removed?.doc.parentCollection !== 'folder' || depth > 64) return false;
  return isInSubtree(deps, rootId, removed.doc.parentId, depth + 1);
}

/** Whether `viewer` may READ the folder now or, once removed, as it last was. */
export async function mayReadFolderEvents(deps: Deps, viewer: Viewer | null, folderId: string): Promise<boolean> {
  const acl = await folderAclNowOrLast(deps, folderId);
  return acl !== null && hasAccess(acl, viewer, AccessLevel.READ);
}

/**
 * Whether an event belongs to the subtree of `rootId` and `viewer` may READ the folder it is about; an item moved out
 * of the subtree counts too (its leaving is part of the subtree's story).
 */
export async function maySeeSubtreeEvent(
  deps: Deps,
  viewer: Viewer | null,
  rootId: string,
  event: RecordedEvent,
): Promise<boolean> {
  const folderId = await folderOfEvent(deps, event);
  const from = event.type === 'ItemMoved' ? (event.data as { fromFolderId?: string }).fromFolderId : undefined;
  for (const candidate of [folderId, from]) {
    if (
      candidate &&
      (await isInSubtree(deps, rootId, candidate)) &&
      (await mayReadFolderEvents(deps, viewer, candidate))
    )
      return true;
  }
  return false;
}
