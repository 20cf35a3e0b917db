import type { Services } from '../services';
import type { StreamAppend } from '../ports/eventStore';
import type { FolderDoc } from '../ports/readModel';
import type { RequestMeta } from './requestMeta';
import { toNewEvents } from './commandContext';
import { reclaimBlobs } from './blobReclaim';
import {
  assertItemEvent,
  checkItemName,
  itemDecider,
  itemStateFor,
  itemStream,
  renamedCandidate,
  type ItemCommand,
  type ItemEvent,
  type ItemState,
} from '../domain/item';
import { claim, release, reservationDecider, siblingNameStream } from '../domain/uniqueName';
import type { Metadata } from '../domain/metadata';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';

/**
 * Item writes: each loads the item stream (and the reservation streams of the names it touches), runs the pure
 * decider and appends everything in one atomic multi-stream append with expected revisions; a conflict re-runs the
 * whole attempt. Items share one name space with the folders of their parent folder (`siblingname-<folderId>-…`,
 * claimed with owner type `item`); a taken name is not an error for items: Girder renames to `name (1)`, `name (2)`, …
 */

export function decideOn(state: ItemState, command: ItemCommand): { events: ItemEvent[]; state: ItemState } {
  const events = itemDecider.decide(command, state).map(assertItemEvent);
  return { events, state: events.reduce(itemDecider.evolve, state) };
}

export async function loadItemStream(services: Services, itemId: string) {
  const loaded = await services.commands.load(itemStream(itemId), itemDecider);
  if (loaded.state.exists) return loaded;
  // No creation event on its own stream: an item created by a folder copy (FolderCopied, docs/subtree-operations.md).
  // Its state is the read model's, once the read model reflects everything appended so far (this stream included).
  await services.projector.waitFor(await services.eventStore.headPosition());
  const item = await services.readModel.items.get(itemId);
  if (!item) return { ...loaded, state: loaded.exists ? loaded.state : itemStateFor(itemId) };
  const files = await services.readModel.files.listForItem(itemId, { limit: 0, offset: 0, sort: 'created', sortdir: 1 });
  const state: ItemState = {
    exists: true, itemId, folderId: item.folderId, name: item.name, description: item.description, meta: item.meta ?? {}, size: item.size,
    creatorId: item.creatorId, created: item.created, updated: item.updated,
    files: Object.fromEntries(
      files.rows.map(({ _id, itemId: _item, ...file }) => {
        void _item;
        return [_id, { ...file, fileId: _id }];
      }),
    ),
  };
  return { ...loaded, state };
}

/**
 * Finds the first free name among `name`, `name (1)`, … in a folder (a name the item itself holds counts as free)
 * and returns it with the claim to append (none when the item already holds it). Claims carry the reservation
 * stream's expected revision, so a concurrent claim of the same name makes the attempt run again.
 */
export async function claimItemName(
  services: Services,
  folderId: string,
  name: string,
  itemId: string,
  meta: RequestMeta,
): Promise<{ name: string; appends: StreamAppend[] }> {
  for (let n = 0; ; n++) {
    const candidate = renamedCandidate(name, n);
    const streamId = siblingNameStream(folderId, candidate);
    const reservation = await services.commands.load(streamId, reservationDecider);
    const owner = reservation.state.owner;
    if (owner?.id === itemId) return { name: candidate, appends: [] };
    if (!owner) {
      return { name: candidate, appends: [{ streamId, expectedState: reservation.expected, events: toNewEvents([claim(candidate, 'item', itemId)], meta) }] };
    }
  }
}

/** What Girder's validate would rename to, without claiming (the intermediate name of a rename followed by a move). */
async function freeNameIn(services: Services, folderId: string, name: string, itemId: string): Promise<string> {
  for (let n = 0; ; n++) {
    const candidate = renamedCandidate(name, n);
    const { state } = await services.commands.load(siblingNameStream(folderId, candidate), reservationDecider);
    if (!state.owner || state.owner.id === itemId) return candidate;
  }
}

/** Releases the item's claim on a name in a folder (nothing when it does not hold it). */
export async function releaseItemName(services: Services, folderId: string, name: string, itemId: string, meta: RequestMeta): Promise<StreamAppend[]> {
  const streamId = siblingNameStream(folderId, name);
  const held = await services.commands.load(streamId, reservationDecider);
  if (held.state.owner?.id !== itemId) return [];
  return [{ streamId, expectedState: held.expected, events: toNewEvents([release(itemId)], meta) }];
}

export interface NewItemInput {
  itemId: string;
  folderId: string;
  name: string;
  description: string;
  creatorId: string | null;
  created: string;
  metadata?: Metadata;
  meta?: Metadata;
  copyOfItem?: string;
}

/**
 * The appends that create an item (its name claimed, auto-renamed) plus the events `more` derives from the new
 * item's state (files), for use inside a `commands.run` attempt.
 */
export async function newItemAppends(
  services: Services,
  input: NewItemInput,
  meta: RequestMeta,
  more: (state: ItemState) => ItemCommand[] = () => [],
): Promise<{ appends: StreamAppend[]; name: string }> {
  const claimed = await claimItemName(services, input.folderId, checkItemName(input.name), input.itemId, meta);
  const created = decideOn(itemStateFor(input.itemId), { type: 'CreateItem', data: { ...input, name: claimed.name } });
  let state = created.state;
  const events = [...created.events];
  for (const command of more(state)) {
    const next = decideOn(state, command);
    events.push(...next.events);
    state = next.state;
  }
  return {
    appends: [...claimed.appends, { streamId: itemStream(input.itemId), expectedState: 'no_stream', events: toNewEvents(events, meta) }],
    name: claimed.name,
  };
}

export interface CreateItemInput {
  folder: FolderDoc;
  name: string;
  description: string;
  reuseExisting: boolean;
  metadata?: Metadata;
  creatorId: string | null;
}

/**
 * `POST /item` (Girder's createItem): with `reuseExisting`, an item of exactly that name in the folder is returned
 * (with `metadata` merged into it); otherwise a new item, renamed `name (n)` when a sibling folder or item holds the
 * name. Metadata keys are validated as part of the decision, so an invalid key saves nothing (Girder saves the item
 * first and then fails). Resolves with the item id once the read models show it.
 */
export async function createItem(services: Services, input: CreateItemInput, meta: RequestMeta): Promise<string> {
  const { commands } = services;
  const name = checkItemName(input.name);
  const hasMetadata = input.metadata !== undefined && Object.keys(input.metadata).length > 0;
  return commands.run(async () => {
    if (input.reuseExisting) {
      const { state } = await commands.load(siblingNameStream(input.folder._id, name), reservationDecider);
      if (state.owner?.type === 'item') {
        const existingId = state.owner.id;
        if (!hasMetadata) return { appends: [], result: existingId };
        const existing = await loadItemStream(services, existingId);
        const { events } = decideOn(existing.state, { type: 'SetItemMetadata', data: { metadata: input.metadata!, allowNull: false, now: girderTime() } });
        return { appends: [{ streamId: itemStream(existingId), expectedState: existing.expected, events: toNewEvents(events, meta) }], result: existingId };
      }
    }
    const itemId = newId();
    const { appends } = await newItemAppends(
      services,
      {
        itemId, folderId: input.folder._id, name, description: input.description, creatorId: input.creatorId, created: girderTime(),
        ...(hasMetadata ? { metadata: input.metadata } : {}),
      },
      meta,
    );
    return { appends, result: itemId };
  });
}

export interface UpdateItemInput {
  itemId: string;
  name?: string;
  description?: string;
  /** The folder to move to (already loaded at WRITE). */
  folder?: FolderDoc;
}

/**
 * `PUT /item/:id` without its metadata part (Girder's updateItem, then move): name and description are replaced,
 * `updated` always advances, and the name is made unique in the item's folder; then, when another folder is given,
 * the item moves there and its name is made unique again among the new siblings. One atomic append.
 */
export async function updateItem(services: Services, input: UpdateItemInput, meta: RequestMeta): Promise<void> {
  const { itemId } = input;
  await services.commands.run(async () => {
    const now = girderTime();
    const loaded = await loadItemStream(services, itemId);
    const before = loaded.state;
    const moving = input.folder !== undefined && input.folder._id !== before.folderId && before.exists;
    let name: string | undefined;
    if (input.name !== undefined) {
      const wanted = checkItemName(input.name);
      name = wanted === before.name ? wanted : await freeNameIn(services, before.folderId, wanted, itemId);
    }
    const updated = decideOn(before, {
      type: 'UpdateItem',
      data: { ...(name !== undefined ? { name } : {}), ...(input.description !== undefined ? { description: input.description } : {}), now },
    });
    const events = [...updated.events];
    const appends: StreamAppend[] = [];
    let state = updated.state;
    if (moving) {
      const claimed = await claimItemName(services, input.folder!._id, state.name, itemId, meta);
      const moved = decideOn(state, { type: 'MoveItem', data: { folderId: input.folder!._id, name: claimed.name, now } });
      events.push(...moved.events);
      state = moved.state;
      appends.push(...claimed.appends, ...(await releaseItemName(services, before.folderId, before.name, itemId, meta)));
    } else if (state.name !== before.name) {
      const claimed = await claimItemName(services, before.folderId, state.name, itemId, meta);
      appends.push(...claimed.appends, ...(await releaseItemName(services, before.folderId, before.name, itemId, meta)));
    }
    appends.push({ streamId: itemStream(itemId), expectedState: loaded.expected, events: toNewEvents(events, meta) });
    return { appends, result: undefined };
  });
}

async function changeItem(services: Services, itemId: string, command: ItemCommand, meta: RequestMeta): Promise<void> {
  await services.commands.run(async () => {
    const loaded = await loadItemStream(services, itemId);
    const { events } = decideOn(loaded.state, command);
    return { appends: [{ streamId: itemStream(itemId), expectedState: loaded.expected, events: toNewEvents(events, meta) }], result: undefined };
  });
}

/** `PUT /item/:id/metadata` (and the metadata part of `PUT /item/:id`). */
export function setItemMetadata(services: Services, itemId: string, metadata: Metadata, allowNull: boolean, meta: RequestMeta): Promise<void> {
  return changeItem(services, itemId, { type: 'SetItemMetadata', data: { metadata, allowNull, now: girderTime() } }, meta);
}

/** `DELETE /item/:id/metadata`. */
export function deleteItemMetadata(services: Services, itemId: string, fields: string[], meta: RequestMeta): Promise<void> {
  return changeItem(services, itemId, { type: 'DeleteItemMetadata', data: { fields, now: girderTime() } }, meta);
}

/**
 * `DELETE /item/:id`: the item and its files go in one event, its name is released, and afterwards the blobs no
 * other file references are deleted. Resolves with the deleted item's name.
 */
export async function deleteItem(services: Services, itemId: string, meta: RequestMeta): Promise<string> {
  const { name, blobIds } = await services.commands.run(async () => {
    const loaded = await loadItemStream(services, itemId);
    const { events } = decideOn(loaded.state, { type: 'DeleteItem', data: {} });
    const appends: StreamAppend[] = [
      ...(await releaseItemName(services, loaded.state.folderId, loaded.state.name, itemId, meta)),
      { streamId: itemStream(itemId), expectedState: loaded.expected, events: toNewEvents(events, meta) },
    ];
    return { appends, result: { name: loaded.state.name, blobIds: Object.values(loaded.state.files).map((f) => f.blobId) } };
  });
  await reclaimBlobs(services, blobIds);
  return name;
}

export interface CopyItemInput {
  sourceId: string;
  folder: FolderDoc;
  name?: string;
  description?: string;
  creatorId: string | null;
}

/**
 * `POST /item/:id/copy` (Girder's copyItem): a new item in `folder` (name defaults to the source's, auto-renamed;
 * description to the source's), the source's metadata, and a copy of every file referencing the same blob (no bytes
 * are copied). ItemCopied is appended to the source with its expected revision, so the copy conflicts with a
 * concurrent delete of the source; the blobs are held until the copy is visible, so a concurrent reclaim keeps them.
 */
export async function copyItem(services: Services, input: CopyItemInput, meta: RequestMeta): Promise<string> {
  const held = new Set<string>();
  try {
    return await services.commands.run(async () => {
      const source = await loadItemStream(services, input.sourceId);
      const s = source.state;
      const itemId = newId();
      // First, so that a source that does not exist (any more) is `Invalid item id (<id>).`
      const recorded = decideOn(s, { type: 'RecordCopy', data: { copyItemId: itemId } });
      for (const file of Object.values(s.files)) {
        if (!held.has(file.blobId)) {
          services.blobs.hold(file.blobId);
          held.add(file.blobId);
        }
      }
      const now = girderTime();
      const { appends } = await newItemAppends(
        services,
        {
          itemId, folderId: input.folder._id, name: input.name || s.name, description: input.description ?? s.description,
          creatorId: input.creatorId, created: now, meta: s.meta, copyOfItem: s.itemId,
        },
        meta,
        () =>
          Object.values(s.files).map(({ copyOfFile, copierId, copied, ...file }) => {
            void copyOfFile, copierId, copied;
            // Girder's copyFile: the source's record (creator, created) plus who copied it, when.
            return {
              type: 'AddFile' as const,
              data: {
                file: {
                  ...file, fileId: newId(), copyOfFile: file.fileId, copied: now,
                  ...(input.creatorId !== null ? { copierId: input.creatorId } : {}),
                },
              },
            };
          }),
      );
      appends.push({ streamId: itemStream(s.itemId), expectedState: source.expected, events: toNewEvents(recorded.events, meta) });
      return { appends, result: itemId };
    });
  } finally {
    for (const blobId of held) services.blobs.release(blobId);
  }
}
