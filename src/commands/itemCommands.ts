import type { FolderDoc } from '../ports/readModel';
import type { RequestMeta } from './requestMeta';
import type { AnyDecidedStream, CommandAttempt } from './streamHandle';
import { reclaimBlobs } from './blobReclaim';
import {
  checkItemName,
  itemDecider,
  itemStateFor,
  itemStream,
  renamedCandidate,
  type ItemCommand,
  type ItemState,
} from '../domain/item';
import { guardSiblingName, type NameGuard, type SiblingLookup } from './siblingNames';
import type { Metadata } from '../domain/metadata';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import type { BlobDeps, StreamDeps } from './writeDeps';

/**
 * Item writes: each loads the item stream (and the reservation streams of the names it touches), runs the pure
 * decider and appends everything in one atomic multi-stream append with expected revisions; a conflict re-runs the
 * whole attempt. Items share one name space with the folders of their parent folder, under the same rule
 * (src/commands/siblingNames.ts): the read model, caught up to the head, says whether a name is taken, and the name's
 * reservation stream (`siblingname-<folderId>-…`, claimed with owner type `item`) only serialises writers. A taken
 * name is not an error for items: Girder renames to `name (1)`, `name (2)`, …
 */

/** An item's stream in a command's attempt, its state the read model's for an item created by a folder copy. */
export async function loadItemStream(deps: StreamDeps, attempt: CommandAttempt, itemId: string) {
  const loaded = await attempt.load(itemStream(itemId), itemDecider);
  if (loaded.state.exists) return loaded;
  // No creation event on its own stream: an item created by a folder copy (FolderCopied, docs/subtree-operations.md).
  // Its state is the read model's, once the read model reflects everything appended so far (this stream included).
  await deps.projector.waitFor(await deps.eventStore.headPosition());
  const item = await deps.readModel.items.get(itemId);
  if (!item) {
    if (!loaded.exists) loaded.startFrom(itemStateFor(itemId));
    return loaded;
  }
  const files = await deps.readModel.files.listForItem(itemId, {
    limit: 0,
    offset: 0,
    sort: 'created',
    sortdir: 1,
  });
  const state: ItemState = {
    exists: true,
    itemId,
    folderId: item.folderId,
    name: item.name,
    description: item.description,
    meta: item.meta,
    size: item.size,
    creatorId: item.creatorId,
    created: item.created,
    updated: item.updated,
    files: Object.fromEntries(
      files.rows.map(({ _id, itemId: _item, ...file }) => {
        return [_id, { ...file, fileId: _id }];
      }),
    ),
  };
  loaded.startFrom(state);
  return loaded;
}

/**
 * What holds `name` among the children of a folder in the read model, for the item `itemId`: a sibling folder, another
 * item (the item itself does not count: renaming an item to a name it already holds keeps it), or nothing.
 */
function itemSiblingLookup(deps: StreamDeps, itemId: string): SiblingLookup {
  return (parentType, parentId, name) => deps.readModel.folders.siblingNamed(parentType, parentId, name, itemId);
}

/** The guard of one name in a folder for the item `itemId` (the read model, caught up to the head, decides). */
function guardItemName(deps: StreamDeps, folderId: string, name: string, itemId: string): Promise<NameGuard> {
  return guardSiblingName(deps.commands, itemSiblingLookup(deps, itemId), 'folder', folderId, name);
}

/**
 * Girder's item auto-rename: the first of `name`, `name (1)`, … that no sibling folder or other item in the folder
 * holds, each candidate checked on the read model caught up to the head (src/commands/siblingNames.ts), with its
 * guard. `first`, when given, is the guard of `name` itself, already taken in this attempt.
 */
async function freeItemName(
  deps: StreamDeps,
  folderId: string,
  name: string,
  itemId: string,
  first?: NameGuard,
): Promise<{ name: string; guard: NameGuard }> {
  for (let n = 0; ; n++) {
    const candidate = renamedCandidate(name, n);
    const guard = n === 0 && first ? first : await guardItemName(deps, folderId, candidate, itemId);
    if (guard.takenBy === null) return { name: candidate, guard };
  }
}

/**
 * Gives the item the first free name among `name`, `name (1)`, … in a folder (see {@link freeItemName}) and returns
 * it with the claim to append in the same atomic write. The claim carries the name's reservation stream's expected
 * revision, so of two writers giving a child that name one conflicts and, on its retry, sees the winner and moves on
 * to the next candidate. Nothing is released when an item leaves a name: the read model is the truth.
 */
async function claimItemName(
  deps: StreamDeps,
  attempt: CommandAttempt,
  folderId: string,
  name: string,
  itemId: string,
  first?: NameGuard,
): Promise<{ name: string; claim: AnyDecidedStream }> {
  const free = await freeItemName(deps, folderId, name, itemId, first);
  return { name: free.name, claim: free.guard.claim(attempt, 'item', itemId) };
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
 * The streams that create an item in a command's attempt, in their append order: its name's claim (auto-renamed),
 * then the new item's stream with the creation and the commands `more` derives from the new item's state (files).
 * `nameGuard`, when given, is the guard of the wanted name already taken in this attempt (see {@link claimItemName}).
 */
export async function newItemStreams(
  deps: StreamDeps,
  attempt: CommandAttempt,
  input: NewItemInput,
  more: (state: ItemState) => ItemCommand[] = () => [],
  nameGuard?: NameGuard,
): Promise<{ streams: AnyDecidedStream[]; name: string }> {
  const claimed = await claimItemName(
    deps,
    attempt,
    input.folderId,
    checkItemName(input.name),
    input.itemId,
    nameGuard,
  );
  const item = attempt.create(itemStream(input.itemId), itemDecider, itemStateFor(input.itemId));
  item.decide({ type: 'CreateItem', data: { ...input, name: claimed.name } });
  for (const command of more(item.state)) item.decide(command);
  return { streams: [claimed.claim, item], name: claimed.name };
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
 *
 * With `reuseExisting` the name's guard is taken before looking for the item and its claim goes with a new item, so
 * of two such requests racing for one name the second conflicts, retries, and returns the first one's item.
 */
export async function createItem(deps: StreamDeps, input: CreateItemInput, meta: RequestMeta): Promise<string> {
  const { commands } = deps;
  const name = checkItemName(input.name);
  const folderId = input.folder._id;
  const metadata = input.metadata !== undefined && Object.keys(input.metadata).length > 0 ? input.metadata : undefined;
  return commands.handleGroup(meta, async (attempt) => {
    const itemId = newId();
    let nameGuard: NameGuard | undefined;
    if (input.reuseExisting) {
      nameGuard = await guardItemName(deps, folderId, name, itemId);
      const existingId = await deps.readModel.items.namedInFolder(folderId, name);
      if (existingId) {
        if (!metadata) return { append: [], result: existingId };
        const existing = await loadItemStream(deps, attempt, existingId);
        existing.decide({ type: 'SetItemMetadata', data: { metadata, allowNull: false, now: girderTime() } });
        return { append: [existing], result: existingId };
      }
    }
    const { streams } = await newItemStreams(
      deps,
      attempt,
      {
        itemId,
        folderId,
        name,
        description: input.description,
        creatorId: input.creatorId,
        created: girderTime(),
        ...(metadata ? { metadata } : {}),
      },
      undefined,
      nameGuard,
    );
    return { append: streams, result: itemId };
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
export async function updateItem(deps: StreamDeps, input: UpdateItemInput, meta: RequestMeta): Promise<void> {
  const { itemId } = input;
  await deps.commands.handleGroup(meta, async (attempt) => {
    const now = girderTime();
    const item = await loadItemStream(deps, attempt, itemId);
    const before = item.state;
    const destination =
      input.folder !== undefined && input.folder._id !== before.folderId && before.exists ? input.folder : undefined;
    // The name in the item's own folder (Girder's validate on save; only the intermediate name of a rename and move).
    let name: string | undefined;
    let renamed: { name: string; guard: NameGuard } | undefined;
    if (input.name !== undefined) {
      const wanted = checkItemName(input.name);
      if (wanted !== before.name) renamed = await freeItemName(deps, before.folderId, wanted, itemId);
      name = renamed?.name ?? wanted;
    }
    item.decide({
      type: 'UpdateItem',
      data: {
        ...(name !== undefined ? { name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        now,
      },
    });
    const append: AnyDecidedStream[] = [];
    if (destination) {
      const claimed = await claimItemName(deps, attempt, destination._id, item.state.name, itemId);
      item.decide({ type: 'MoveItem', data: { folderId: destination._id, name: claimed.name, now } });
      append.push(claimed.claim);
    } else if (renamed && item.state.name !== before.name) {
      append.push(renamed.guard.claim(attempt, 'item', itemId));
    }
    append.push(item);
    return { append, result: undefined };
  });
}

async function changeItem(deps: StreamDeps, itemId: string, command: ItemCommand, meta: RequestMeta): Promise<void> {
  await deps.commands.handleGroup(meta, async (attempt) => {
    const item = await loadItemStream(deps, attempt, itemId);
    item.decide(command);
    return { append: [item], result: undefined };
  });
}

/** `PUT /item/:id/metadata` (and the metadata part of `PUT /item/:id`). */
export function setItemMetadata(
  deps: StreamDeps,
  itemId: string,
  metadata: Metadata,
  allowNull: boolean,
  meta: RequestMeta,
): Promise<void> {
  return changeItem(deps, itemId, { type: 'SetItemMetadata', data: { metadata, allowNull, now: girderTime() } }, meta);
}

/** `DELETE /item/:id/metadata`. */
export function deleteItemMetadata(
  deps: StreamDeps,
  itemId: string,
  fields: string[],
  meta: RequestMeta,
): Promise<void> {
  return changeItem(deps, itemId, { type: 'DeleteItemMetadata', data: { fields, now: girderTime() } }, meta);
}

/**
 * `DELETE /item/:id`: the item and its files go in one event (its name is free once the read model drops it), and
 * afterwards the blobs no other file references are deleted. Resolves with the deleted item's name.
 */
export async function deleteItem(deps: BlobDeps, itemId: string, meta: RequestMeta): Promise<string> {
  const { name, blobIds } = await deps.commands.handleGroup(meta, async (attempt) => {
    const item = await loadItemStream(deps, attempt, itemId);
    const before = item.state;
    item.decide({ type: 'DeleteItem', data: {} });
    return {
      append: [item],
      result: { name: before.name, blobIds: Object.values(before.files).map((f) => f.blobId) },
    };
  });
  await reclaimBlobs(deps, blobIds);
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
export async function copyItem(deps: BlobDeps, input: CopyItemInput, meta: RequestMeta): Promise<string> {
  const held = new Set<string>();
  try {
    return await deps.commands.handleGroup(meta, async (attempt) => {
      const source = await loadItemStream(deps, attempt, input.sourceId);
      const s = source.state;
      const itemId = newId();
      // First, so that a source that does not exist (any more) is `Invalid item id (<id>).`
      source.decide({ type: 'RecordCopy', data: { copyItemId: itemId } });
      for (const file of Object.values(s.files)) {
        if (!held.has(file.blobId)) {
          await deps.blobs.hold(file.blobId);
          held.add(file.blobId);
        }
      }
      const now = girderTime();
      const { streams } = await newItemStreams(
        deps,
        attempt,
        {
          itemId,
          folderId: input.folder._id,
          name: input.name || s.name,
          description: input.description ?? s.description,
          creatorId: input.creatorId,
          created: now,
          meta: s.meta,
          copyOfItem: s.itemId,
        },
        () =>
          Object.values(s.files).map(({ copyOfFile, copierId, copied, ...file }) => {
            // Girder's copyFile: the source's record (creator, created) plus who copied it, when.
            return {
              type: 'AddFile' as const,
              data: {
                file: {
                  ...file,
                  fileId: newId(),
                  copyOfFile: file.fileId,
                  copied: now,
                  ...(input.creatorId !== null ? { copierId: input.creatorId } : {}),
                },
              },
            };
          }),
      );
      return { append: [...streams, source], result: itemId };
    });
  } finally {
    for (const blobId of held) deps.blobs.release(blobId);
  }
}
