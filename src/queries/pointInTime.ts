import type { LogDeps, ReadModelDeps } from './readDeps';
import { folderDecider, folderStateFor, type FolderState } from '../domain/folder';
import type { FolderAccessChangedData, FolderCopiedData, FolderEvent } from '../domain/folderEvents';
import { unknownEvent } from '../domain/decider';
import type { FolderDoc } from '../ports/readModel';
import { AccessLevel, hasAccess, type Viewer } from '../domain/access';
import { RestError } from '../domain/errors';
import { isObjectId, deriveId } from '../domain/ids';
import { parseIsoTime } from '../domain/time';
import { loadModelAt, type LoadedParent } from './models';
import { folderView } from './views';
import { folderSortField } from './folderQueries';
import { StreamCache, folderTimeline, historyOf, type TimelineEntry } from './history';
import type { Paging } from '../domain/paging';
import { ownValue } from '../domain/ownMap';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps & LogDeps;

/**
 * Point-in-time reads: `GET /folder/:id?at=…` and `GET /folder?parentType=…&parentId=…&at=…`.
 *
 * A folder as it was is rebuilt from its events, not from the read model: its timeline (own stream plus the subtree
 * operations of other folders that touched it, src/queries/history.ts) folded up to the position `at` resolves to.
 * A folder a copy created below the copied one has no events of its own until it changes: it starts as its source was
 * just before the copy (found through the copy's derived ids), with the ACL the copy gave it. Two things the folder's
 * events do not carry come from read-model indexes the projection keeps (src/infra/readmodel/sqlite/historyStore.ts):
 * which folders were under a parent then (candidates for the listing) and the folder's root and size (the size is a
 * sum over its items' streams).
 */

/** A parsed `at`: a log position, or an ISO 8601 time (epoch ms). */
type AtValue = { raw: string; position: bigint } | { raw: string; time: number };

/**
 * `at` as given: digits are a position (at most 2^53 - 1), else an ISO 8601 date or date-time (UTC without an offset).
 */
function parseAt(raw: string): AtValue {
  const text = raw.trim();
  if (/^\d+$/.test(text)) {
    const position = BigInt(text);
    if (position <= BigInt(Number.MAX_SAFE_INTEGER)) return { raw, position };
  } else {
    const time = parseIsoTime(text);
    if (time !== null) return { raw, time };
  }
  throw new RestError(`Invalid value for at: "${raw}". Expected an ISO 8601 time or a position.`);
}

/** Events read per step when a time is looked up (one read of the log each). */
const TIME_LOOKUP_PAGE = 500;

/**
 * The log position an `at` stands for: itself, or for a time the last event recorded at or before it (0 when none).
 * Event times grow with positions, so it is the first event, reading backwards from the head, recorded at or before
 * the time. Every read starts at a position an event had (KurrentDB refuses any other start, so positions are never
 * computed); the cost grows with the number of events recorded after the time, a page of them per read.
 */
async function positionOf(deps: Deps, at: AtValue): Promise<bigint> {
  if ('position' in at) return at.position;
  const store = deps.eventStore;
  let from: bigint | undefined;
  for (;;) {
    let read = 0;
    for await (const event of store.readAll({
      direction: 'backwards',
      maxCount: TIME_LOOKUP_PAGE,
      ...(from === undefined ? {} : { fromPosition: from }),
    })) {
      if (Date.parse(event.metadata.at) <= at.time) return event.position;
      from = event.position;
      read += 1;
    }
    if (read < TIME_LOOKUP_PAGE) return 0n;
  }
}

/**
 * A folder as its events say it was: the decider's state (built by the decider's own `evolve`, so a new folder event
 * is handled here as soon as the decider handles it) plus the two creation facts the decider does not keep.
 */
type FolderAt = FolderState & { creatorId: string | null; created: string };

/** Applies one of the folder's own events; null until an event creates it (create, copy or restore). */
function evolveAt(folderId: string, state: FolderAt | null, event: FolderEvent): FolderAt | null {
  const next = folderDecider.evolve(state ?? folderStateFor(folderId), event);
  switch (event.type) {
    case 'FolderCreated':
    case 'FolderCopied':
    case 'FolderRestored':
      return { ...next, creatorId: event.data.creatorId, created: event.data.created };
    default:
      return state && { ...next, creatorId: state.creatorId, created: state.created };
  }
}

/** Folds timelines up to a position; memoised per (folder, position) within one request. */
class TimeMachine {
  private readonly cache: StreamCache;
  private readonly states = new Map<string, Promise<FolderAt | null>>();

  constructor(private readonly deps: Deps) {
    this.cache = new StreamCache(deps);
  }

  stateAt(folderId: string, position: bigint): Promise<FolderAt | null> {
    const key = `${folderId}@${position}`;
    let state = this.states.get(key);
    if (!state) {
      state = this.fold(folderId, position);
      this.states.set(key, state);
    }
    return state;
  }

  private async fold(folderId: string, position: bigint): Promise<FolderAt | null> {
    const timeline = await folderTimeline(this.deps, folderId, this.cache);
    let state: FolderAt | null = null;
    for (const entry of timeline) {
      if (entry.event.position > position) break;
      state = await this.apply(folderId, state, entry);
    }
    return state?.exists ? state : null;
  }

  private async apply(
    folderId: string,
    state: FolderAt | null,
    { event, via }: TimelineEntry,
  ): Promise<FolderAt | null> {
    // The folder's own events: its stream holds folder events only.
    if (!via) return evolveAt(folderId, state, { type: event.type, data: event.data } as FolderEvent);
    // What an operation on an ancestor (or its collection) did to this folder.
    switch (via.operation) {
      case 'deleted':
        return state && { ...state, exists: false };
      case 'restored':
        return state && { ...state, exists: true };
      case 'accessChanged': {
        // A recursive FolderAccessChanged of an ancestor: the same change as one on this folder's own stream.
        const change: FolderEvent = { type: 'FolderAccessChanged', data: event.data as FolderAccessChangedData };
        return state && { ...folderDecider.evolve(state, change), creatorId: state.creatorId, created: state.created };
      }
      case 'copied':
        return this.copiedDescendant(folderId, event.data as FolderCopiedData, event.position);
      case 'copiedFrom':
      case 'cleared':
        return state;
      default:
        return unknownEvent(via.operation, state);
    }
  }

  /**
   * A folder a copy created below the copied one (FolderCopied at `position` on the new root's stream): its source is
   * the child of its parent's source whose derived id it is; it starts as that source was just before the copy, with
   * the copy's creator, time and ACL (`public` or false) — what the projection gave it.
   */
  private async copiedDescendant(folderId: string, copy: FolderCopiedData, position: bigint): Promise<FolderAt | null> {
    const source = await this.sourceOf(folderId, copy, position);
    const before = source && (await this.stateAt(source, position - 1n));
    if (!before) return null;
    const placement = await historyOf(this.deps).placementAt(folderId, position);
    return {
      exists: true,
      folderId,
      name: before.name,
      description: before.description,
      parentType: 'folder',
      parentId:
        placement?.parentId ??
        (before.parentId === copy.sourceId ? copy.folderId : deriveId(copy.opId, before.parentId)),
      public: copy.public ?? false,
      ...(before.publicFlags !== undefined ? { publicFlags: before.publicFlags } : {}),
      access: copy.access,
      meta: before.meta,
      creatorId: copy.creatorId,
      created: copy.created,
      updated: copy.created,
    };
  }

  private async sourceOf(folderId: string, copy: FolderCopiedData, position: bigint): Promise<string | null> {
    if (folderId === copy.folderId) return copy.sourceId;
    const history = historyOf(this.deps);
    const placement = await history.placementAt(folderId, position);
    if (placement?.parentType !== 'folder') return null;
    const parentSource = await this.sourceOf(placement.parentId, copy, position);
    if (!parentSource) return null;
    const candidates = await history.childrenAt('folder', parentSource, position - 1n);
    return candidates.find((candidate) => deriveId(copy.opId, candidate) === folderId) ?? null;
  }

  /** The folder document as it was (read-model shape, so that it renders as the normal GET does). */
  async docAt(folderId: string, position: bigint): Promise<FolderDoc | null> {
    const state = await this.stateAt(folderId, position);
    if (!state) return null;
    const history = historyOf(this.deps);
    const placement = await history.placementAt(folderId, position);
    return {
      _id: folderId,
      name: state.name,
      lowerName: state.name.toLowerCase(),
      description: state.description,
      parentCollection: state.parentType,
      parentId: state.parentId,
      baseParentType: placement?.baseParentType ?? (state.parentType === 'folder' ? 'user' : state.parentType),
      baseParentId: placement?.baseParentId ?? state.parentId,
      creatorId: state.creatorId,
      created: state.created,
      updated: state.updated,
      size: await history.sizeAt(folderId, position),
      ...(state.public !== undefined ? { public: state.public } : {}),
      ...(state.publicFlags !== undefined ? { publicFlags: state.publicFlags } : {}),
      access: state.access,
      meta: state.meta,
    };
  }
}

const didNotExist = (at: AtValue) => new RestError(`The folder did not exist at ${at.raw}.`);

/**
 * `GET /folder/:id?at=…`: ADMIN on the folder now (a site admin may also look at a folder that no longer exists);
 * the same view fields as the normal GET, `_accessLevel` judged on the ACL it had then.
 */
export async function getFolderAt(
  deps: Deps,
  viewer: Viewer | null,
  folderId: string,
  atRaw: string,
): Promise<Record<string, unknown>> {
  historyOf(deps);
  const at = parseAt(atRaw);
  await requireAdminNow(deps, viewer, folderId);
  const position = await positionOf(deps, at);
  const doc = await new TimeMachine(deps).docAt(folderId, position);
  if (!doc) throw didNotExist(at);
  return folderView(doc, viewer);
}

async function requireAdminNow(deps: Deps, viewer: Viewer | null, folderId: string): Promise<void> {
  const live = isObjectId(folderId) ? await deps.readModel.folders.get(folderId) : null;
  if (!live) {
    if (viewer?.admin && isObjectId(folderId) && (await folderTimeline(deps, folderId)).length > 0) return;
    throw new RestError(`Invalid folder id (${folderId}).`);
  }
  await loadModelAt(deps, 'folder', folderId, viewer, AccessLevel.ADMIN);
}

export interface ChildrenAtInput {
  /** The parent, loaded at ADMIN by the route. */
  parent: LoadedParent;
  at: string;
  name?: string;
  paging: Paging;
}

/**
 * `GET /folder?parentType=…&parentId=…&at=…`: the folders under the parent then (candidates from the placement index,
 * each rebuilt from its events), those the caller could READ then, optionally by exact name; sorted and paged as the
 * normal listing. ADMIN on the parent now (site admins pass).
 */
export async function listFoldersAt(
  deps: Deps,
  viewer: Viewer | null,
  input: ChildrenAtInput,
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  const history = historyOf(deps);
  const at = parseAt(input.at);
  const { parent } = input;
  const position = await positionOf(deps, at);
  const machine = new TimeMachine(deps);
  if (parent.type === 'folder' && !(await machine.stateAt(parent.doc._id, position))) throw didNotExist(at);
  const ids = await history.childrenAt(parent.type, parent.doc._id, position);
  const docs: FolderDoc[] = [];
  for (const id of ids) {
    const doc = await machine.docAt(id, position);
    if (doc?.parentId !== parent.doc._id) continue;
    if (!hasAccess(doc, viewer, AccessLevel.READ)) continue;
    if (input.name && doc.name !== input.name) continue;
    docs.push(doc);
  }
  const sort = folderSortField(input.paging.sort);
  const direction = input.paging.sortdir === -1 ? -1 : 1;
  docs.sort((a, b) => direction * (compare(valueAt(a, sort), valueAt(b, sort)) || compare(a._id, b._id)));
  const start = Math.max(0, input.paging.offset);
  const rows = input.paging.limit > 0 ? docs.slice(start, start + input.paging.limit) : docs.slice(start);
  return { rows: rows.map((doc) => folderView(doc, viewer)), total: docs.length };
}

function valueAt(doc: FolderDoc, field: string): unknown {
  let value: unknown = doc;
  for (const part of field.split('.')) {
    // Own properties only: a sort on `constructor` or `toString` finds nothing, not a function of Object.prototype.
    if (value === null || typeof value !== 'object') return undefined;
    value = ownValue(value as Record<string, unknown>, part);
  }
  return value;
}

/** Ascending order of mixed values: absent first, then numbers, then strings (binary), then anything else as JSON. */
function compare(a: unknown, b: unknown): number {
  const rank = (v: unknown) =>
    v === undefined || v === null
      ? 0
      : typeof v === 'number' || typeof v === 'boolean'
        ? 1
        : typeof v === 'string'
          ? 2
          : 3;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  if (ra === 1) return Number(a) - Number(b);
  const sa = ra === 2 ? (a as string) : JSON.stringify(a);
  const sb = rb === 2 ? (b as string) : JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}
