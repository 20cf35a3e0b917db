import type { LogDeps, ReadModelDeps } from './readDeps';
import type { RecordedEvent } from '../ports/eventStore';
import { StreamNotFoundError } from '../ports/eventStore';
import type { HistoryQueries, SubtreeOperation } from '../ports/readModel';
import {
  AccessLevel,
  accessDeniedMessage,
  hasAccess,
  type AccessControlled,
  type AccessList,
  type Viewer,
} from '../domain/access';
import { AccessDeniedError, RestError } from '../domain/errors';
import { isObjectId } from '../domain/ids';
import { folderStream } from '../domain/folder';
import { itemStream } from '../domain/item';
import { collectionStream } from '../domain/collection';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps<'folders' | 'items' | 'users' | 'history' | 'subtree'> & LogDeps;

/**
 * Audit history of folders and items (`GET /folder/:id/history`, `GET /item/:id/history`), and the folder timeline
 * that point-in-time reads (src/queries/pointInTime.ts) fold over.
 *
 * A folder's timeline is its own stream plus the events of subtree operations on other folders that touched it, found
 * through the history index `rm_subtree_ops` (docs/subtree-operations.md): deleted or emptied along with an ancestor,
 * created by a copy of an ancestor, copied as part of a copy, re-permissioned along with an ancestor, restored along
 * with an ancestor. Such an event is listed as it is recorded on the acting folder's stream, with
 * `data.via = {folderId, operation}` naming that folder and what the operation did to this one (docs/events.md).
 */

/** What an operation on another folder did to this one (`operation`), and which folder's stream holds the event. */
interface Via {
  /** The folder whose stream holds the event (absent when a collection's does: `collectionId`). */
  folderId?: string;
  /** A collection delete removed the folder: the collection whose stream holds CollectionDeleted. */
  collectionId?: string;
  operation: SubtreeOperation;
  /** Item timelines: the item's folder the operation touched. */
  inFolder?: string;
}

export interface TimelineEntry {
  event: RecordedEvent;
  via?: Via;
}

/** One history entry as the routes return it. */
export interface HistoryEntryView {
  revision: number;
  position: string;
  type: string;
  at: string;
  userId: string | null;
  login: string | null;
  requestId: string | null;
  data: unknown;
}

/** The history index (every read model keeps one: the port's history role is required). */
export function historyOf(deps: Deps): HistoryQueries {
  return deps.readModel.history;
}

/** Every event of a stream, oldest first (none when the stream does not exist). */
async function readStreamEvents(deps: Deps, streamId: string): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  try {
    for await (const event of deps.eventStore.readStream(streamId)) events.push(event);
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return events;
}

/** Reads events of other folders' streams by position, each stream once per request. */
export class StreamCache {
  private readonly streams = new Map<string, Promise<RecordedEvent[]>>();
  constructor(private readonly deps: Deps) {}

  stream(streamId: string): Promise<RecordedEvent[]> {
    let events = this.streams.get(streamId);
    if (!events) {
      events = readStreamEvents(this.deps, streamId);
      this.streams.set(streamId, events);
    }
    return events;
  }

  async eventAt(streamId: string, position: bigint): Promise<RecordedEvent | null> {
    return (await this.stream(streamId)).find((e) => e.position === position) ?? null;
  }
}

/**
 * The event of a subtree operation recorded at `position` on the stream of `rootId`: a folder's, or a collection's
 * (CollectionDeleted removes every folder under the collection).
 */
async function operationEvent(
  cache: StreamCache,
  rootId: string,
  position: bigint,
): Promise<{ event: RecordedEvent; by: { folderId: string } | { collectionId: string } } | null> {
  const event = await cache.eventAt(folderStream(rootId), position);
  if (event) return { event, by: { folderId: rootId } };
  const collectionEvent = await cache.eventAt(collectionStream(rootId), position);
  return collectionEvent ? { event: collectionEvent, by: { collectionId: rootId } } : null;
}

/** The folder's own events and the subtree operations of other folders that touched it, in log order. */
export async function folderTimeline(
  deps: Deps,
  folderId: string,
  cache = new StreamCache(deps),
): Promise<TimelineEntry[]> {
  const own = await cache.stream(folderStream(folderId));
  const positions = new Set(own.map((e) => e.position));
  const entries: TimelineEntry[] = own.map((event) => ({ event }));
  for (const op of await deps.readModel.subtree.subtreeOpsFor(folderId)) {
    if (positions.has(op.position)) continue;
    const found = await operationEvent(cache, op.rootId, op.position);
    if (!found) continue;
    positions.add(op.position);
    entries.push({ event: found.event, via: { ...found.by, operation: op.operation } });
  }
  return entries.sort((a, b) =>
    a.event.position < b.event.position ? -1 : a.event.position > b.event.position ? 1 : 0,
  );
}

/** What an item's own events say about the folders it was in: [from, to) intervals, in order. */
function itemFolderIntervals(
  own: RecordedEvent[],
  fallbackFolderId: string | null,
): { folderId: string; from: bigint; to: bigint | null }[] {
  const intervals: { folderId: string; from: bigint; to: bigint | null }[] = [];
  const open = (folderId: string, from: bigint) => intervals.push({ folderId, from, to: null });
  const closeAt = (position: bigint) => {
    const last = intervals.at(-1);
    if (last?.to === null) last.to = position;
  };
  for (const event of own) {
    const data = event.data as { folderId?: string; fromFolderId?: string };
    if (event.type === 'ItemCreated' && data.folderId) {
      closeAt(event.position);
      open(data.folderId, event.position);
    } else if (event.type === 'ItemMoved' && data.folderId) {
      // An item made by a folder copy has no creation event: before its first move it was where the move started.
      if (intervals.length === 0 && data.fromFolderId) open(data.fromFolderId, 0n);
      closeAt(event.position);
      open(data.folderId, event.position);
    } else if (event.type === 'ItemDeleted') {
      if (intervals.length === 0 && data.folderId) open(data.folderId, 0n);
      closeAt(event.position);
    }
  }
  if (intervals.length === 0 && fallbackFolderId) open(fallbackFolderId, 0n);
  return intervals;
}

/**
 * The item's own events, and the subtree operations that touched the folder it was in while it was there (its folder
 * deleted, emptied, copied, re-permissioned, restored, or created by the copy that created the item), in log order.
 */
async function itemTimeline(
  deps: Deps,
  itemId: string,
  currentFolderId: string | null,
  cache = new StreamCache(deps),
): Promise<TimelineEntry[]> {
  const own = await cache.stream(itemStream(itemId));
  const positions = new Set(own.map((e) => e.position));
  const entries: TimelineEntry[] = own.map((event) => ({ event }));
  for (const interval of itemFolderIntervals(own, currentFolderId)) {
    for (const op of await deps.readModel.subtree.subtreeOpsFor(interval.folderId)) {
      if (
        op.position < interval.from ||
        (interval.to !== null && op.position >= interval.to) ||
        positions.has(op.position)
      )
        continue;
      const found = await operationEvent(cache, op.rootId, op.position);
      if (!found) continue;
      positions.add(op.position);
      entries.push({ event: found.event, via: { ...found.by, operation: op.operation, inFolder: interval.folderId } });
    }
  }
  return entries.sort((a, b) =>
    a.event.position < b.event.position ? -1 : a.event.position > b.event.position ? 1 : 0,
  );
}

/**
 * The folder's ACL as its timeline last recorded it (for a folder the read model no longer has): creation, copy,
 * restore and access changes, its own or an ancestor's recursive one. A removal does not change it.
 */
function lastKnownAcl(timeline: TimelineEntry[]): AccessControlled | null {
  let acl: { public?: boolean; access: AccessList } | null = null;
  for (const { event, via } of timeline) {
    const d = event.data as { access?: AccessList; public?: boolean };
    if (!d.access) continue;
    const setsAcl =
      (!via && ['FolderCreated', 'FolderCopied', 'FolderRestored', 'FolderAccessChanged'].includes(event.type)) ||
      (via?.operation === 'copied' && event.type === 'FolderCopied') ||
      (via?.operation === 'accessChanged' && event.type === 'FolderAccessChanged');
    if (!setsAcl) continue;
    const previousPublic: boolean | undefined = (acl as { public?: boolean } | null)?.public;
    if (via?.operation === 'copied') acl = { public: d.public ?? false, access: d.access };
    else if (event.type === 'FolderAccessChanged' && d.public === undefined && previousPublic !== undefined) {
      acl = { public: previousPublic, access: d.access };
    } else acl = { ...(d.public !== undefined ? { public: d.public } : {}), access: d.access };
  }
  return acl;
}

/**
 * Who may see a folder's history: ADMIN on it now, or for a folder the read model no longer has, ADMIN on it as it
 * was when removed (kept by the read model), else as its timeline last recorded it; site admins always. Throws
 * `Invalid folder id (<id>).` when nothing is known about the id.
 */
async function authorizeFolderHistory(
  deps: Deps,
  viewer: Viewer | null,
  folderId: string,
  timeline: TimelineEntry[],
): Promise<void> {
  if (!isObjectId(folderId)) throw new RestError(`Invalid folder id (${folderId}).`);
  const live = await deps.readModel.folders.get(folderId);
  const removed = live ? null : await historyOf(deps).removedFolder(folderId);
  const acl: AccessControlled | null = live ?? removed?.doc ?? lastKnownAcl(timeline);
  if (!acl && timeline.length === 0) throw new RestError(`Invalid folder id (${folderId}).`);
  const allowed = viewer?.admin === true || (acl !== null && hasAccess(acl, viewer, AccessLevel.ADMIN));
  if (!allowed) throw new AccessDeniedError(accessDeniedMessage(AccessLevel.ADMIN, 'folder', folderId, viewer));
}

/** The ACL that governs a folder now or, once removed, as it last was (null when unknown). */
export async function folderAclNowOrLast(deps: Deps, folderId: string): Promise<AccessControlled | null> {
  const live = await deps.readModel.folders.get(folderId);
  if (live) return live;
  const removed = await deps.readModel.history.removedFolder(folderId);
  if (removed) return removed.doc;
  return lastKnownAcl(await folderTimeline(deps, folderId));
}

// ---- rendering ----

/** Keys whose values are secrets wherever they appear in event data (user and API-key events). */
const SECRET_KEYS = new Set(['passwordHash', 'password', 'salt', 'otp']);

/**
 * Event data as it may leave the service: never a password hash, a token hash or an API key's secret. Folder and item
 * events hold none; the `/events` stream also carries account events, which do.
 */
export function redactEventData(type: string, data: unknown): unknown {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .filter(([key]) => !SECRET_KEYS.has(key))
          .map(([key, v]) => [key, strip(v)]),
      );
    }
    return value;
  };
  const out = strip(data);
  if (out && typeof out === 'object' && !Array.isArray(out)) {
    const fields = out as Record<string, unknown>;
    if (type.startsWith('Token')) delete fields.hash;
    if (type.startsWith('ApiKey')) delete fields.key;
  }
  return out;
}

/** Stream ids that embed a secret (a token's hash prefix) are not shown either. */
export function publicStreamId(streamId: string): string {
  return streamId.startsWith('token-') ? 'token-…' : streamId;
}

/** Logins of event authors, looked up once per request. */
export class LoginCache {
  private readonly logins = new Map<string, Promise<string | null>>();
  constructor(private readonly deps: Deps) {}
  login(userId: string | null): Promise<string | null> {
    if (!userId) return Promise.resolve(null);
    let login = this.logins.get(userId);
    if (!login) {
      login = this.deps.readModel.users.get(userId).then((u) => u?.login ?? null);
      this.logins.set(userId, login);
    }
    return login;
  }
}

async function entryView(entry: TimelineEntry, logins: LoginCache): Promise<HistoryEntryView> {
  const { event, via } = entry;
  const data = redactEventData(event.type, event.data);
  return {
    revision: Number(event.revision),
    position: event.position.toString(),
    type: event.type,
    at: event.metadata.at,
    userId: event.metadata.userId,
    login: await logins.login(event.metadata.userId),
    requestId: event.metadata.requestId,
    data: via ? { ...(data as Record<string, unknown>), via } : data,
  };
}

export interface HistoryPaging {
  limit: number;
  offset: number;
  /** A revision of the resource's own stream: only what came after that event. */
  after?: number;
}

/** Pages a timeline: `after` (a revision of the own stream) first, then offset and limit (0: no limit). */
function pageTimeline(
  timeline: TimelineEntry[],
  ownStreamId: string,
  paging: HistoryPaging,
): { rows: TimelineEntry[]; total: number } {
  let rows = timeline;
  const { after } = paging;
  if (after !== undefined) {
    const anchor = timeline.find(
      (e) => !e.via && e.event.streamId === ownStreamId && e.event.revision === BigInt(after),
    );
    if (!anchor) throw new RestError(`No event at revision ${after} of this history.`);
    rows = rows.filter((e) => e.event.position > anchor.event.position);
  }
  const total = rows.length;
  const start = Math.max(0, paging.offset);
  rows = paging.limit > 0 ? rows.slice(start, start + paging.limit) : rows.slice(start);
  return { rows, total };
}

/** `GET /folder/:id/history`. */
export async function folderHistory(
  deps: Deps,
  viewer: Viewer | null,
  folderId: string,
  paging: HistoryPaging,
): Promise<{ rows: HistoryEntryView[]; total: number }> {
  historyOf(deps);
  const timeline = isObjectId(folderId) ? await folderTimeline(deps, folderId) : [];
  await authorizeFolderHistory(deps, viewer, folderId, timeline);
  const page = pageTimeline(timeline, folderStream(folderId), paging);
  const logins = new LoginCache(deps);
  return { rows: await Promise.all(page.rows.map((e) => entryView(e, logins))), total: page.total };
}

/**
 * `GET /item/:id/history`: ADMIN on the item's folder now; for an item the read model no longer has, on its last
 * folder (as it is now, or as it was when removed, or as its timeline last recorded it); site admins always.
 */
export async function itemHistory(
  deps: Deps,
  viewer: Viewer | null,
  itemId: string,
  paging: HistoryPaging,
): Promise<{ rows: HistoryEntryView[]; total: number }> {
  const history = historyOf(deps);
  if (!isObjectId(itemId)) throw new RestError(`Invalid item id (${itemId}).`);
  const live = await deps.readModel.items.get(itemId);
  const removed = live ? null : await history.removedItem(itemId);
  const cache = new StreamCache(deps);
  const own = await cache.stream(itemStream(itemId));
  let folderId = live?.folderId ?? removed?.doc.folderId ?? null;
  if (!folderId) {
    for (const event of own) {
      const d = event.data as { folderId?: string };
      if (d.folderId) folderId = d.folderId;
    }
  }
  const timeline = await itemTimeline(deps, itemId, folderId, cache);
  if (!live && !removed && timeline.length === 0) throw new RestError(`Invalid item id (${itemId}).`);
  const acl = folderId ? await folderAclNowOrLast(deps, folderId) : null;
  const allowed = viewer?.admin === true || (acl !== null && hasAccess(acl, viewer, AccessLevel.ADMIN));
  if (!allowed) throw new AccessDeniedError(accessDeniedMessage(AccessLevel.ADMIN, 'item', itemId, viewer));
  const page = pageTimeline(timeline, itemStream(itemId), paging);
  const logins = new LoginCache(deps);
  return { rows: await Promise.all(page.rows.map((e) => entryView(e, logins))), total: page.total };
}
