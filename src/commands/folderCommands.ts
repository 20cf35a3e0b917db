import { StreamNotFoundError } from '../ports/eventStore';
import type { RequestMeta } from './requestMeta';
import type { AnyDecidedStream, CommandAttempt } from './streamHandle';
import { FOLDER_TREE_STREAM } from '../domain/folderEvents';
import { folderTreeDecider } from '../domain/folderTree';
import {
  folderDecider,
  folderStateFor,
  folderStateFromDoc,
  folderStream,
  refuseTakenSiblingName,
  type FolderCommand,
} from '../domain/folder';
import { AccessLevel, copyAccess, emptyAccess, withUserAccess, type AccessList, type Viewer } from '../domain/access';
import type { Metadata } from '../domain/metadata';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import type { LoadedParent } from '../queries/models';
import { guardSiblingName, type SiblingLookup } from './siblingNames';
import type { ParentType } from '../domain/parents';
import type { StreamDeps } from './writeDeps';

/**
 * Folder writes: each loads the folder stream (and the reservation stream of a name it gives), runs the pure decider
 * and appends everything in one atomic multi-stream append with expected revisions; a conflict re-runs the whole
 * attempt against the new state, so concurrent writers neither lose updates nor share a sibling name.
 */

/**
 * A folder's decider state from its stream. A folder whose stream holds no creation event was created by a subtree
 * copy (FolderCopied on its copy root's stream, docs/subtree-operations.md): its state is the read model's document,
 * taken once the read model reflects everything appended so far (this stream included).
 */
export async function loadFolder(deps: StreamDeps, attempt: CommandAttempt, folderId: string) {
  const folder = await attempt.load(folderStream(folderId), folderDecider);
  if (folder.state.exists || folder.state.deleted) return folder;
  await deps.projector.waitFor(await deps.eventStore.headPosition());
  const doc = await deps.readModel.folders.get(folderId);
  folder.startFrom(doc ? folderStateFromDoc(doc) : folderStateFor(folderId));
  return folder;
}

/**
 * ACL of a new folder (Girder's createFolder): a folder or collection parent passes on its `public` (default false) and
 * a copy of its access list (not its publicFlags); a user parent passes on nothing (no `public` field at all). The
 * creator then gets ADMIN, and an explicit `public` wins.
 */
export function inheritedAcl(
  parent: LoadedParent,
  creatorId: string | null,
  explicitPublic?: boolean,
): { public?: boolean; access: AccessList } {
  let isPublic: boolean | undefined;
  let access = emptyAccess();
  if (parent.type === 'folder' || parent.type === 'collection') {
    isPublic = parent.doc.public ?? false;
    access = copyAccess(parent.doc.access);
  }
  if (creatorId) access = withUserAccess(access, creatorId, AccessLevel.ADMIN);
  if (explicitPublic !== undefined) isPublic = explicitPublic;
  return { ...(isPublic !== undefined ? { public: isPublic } : {}), access };
}

/**
 * What holds a name among a parent's children in the read model: a folder, an item (folder parents only) or nothing.
 */
export function siblingLookup(deps: StreamDeps): SiblingLookup {
  return (parentType, parentId, name) => deps.readModel.folders.siblingNamed(parentType, parentId, name);
}

export interface CreateFolderInput {
  parent: LoadedParent;
  name: string;
  description: string;
  reuseExisting: boolean;
  public?: boolean;
  metadata?: Metadata;
  creatorId: string | null;
}

/**
 * Creates a folder (or, with `reuseExisting`, returns the sibling folder of that exact name, merging `metadata` into
 * it). Resolves with the folder's id once the read models show it.
 *
 * Unlike Girder, which saves the folder and then fails on invalid metadata keys, the metadata is validated as part of
 * the creation decision and recorded in FolderCreated: on any error nothing is saved.
 */
export async function createFolder(deps: StreamDeps, input: CreateFolderInput, meta: RequestMeta): Promise<string> {
  const { commands } = deps;
  const parentId = input.parent.doc._id;
  const parentType: ParentType = input.parent.type;
  const folderId = newId();
  const created = girderTime();
  const acl = inheritedAcl(input.parent, input.creatorId, input.public);
  const metadata = input.metadata !== undefined && Object.keys(input.metadata).length > 0 ? input.metadata : undefined;
  return commands.handleGroup(meta, async (attempt) => {
    const guard = await guardSiblingName(commands, siblingLookup(deps), parentType, parentId, input.name);
    if (input.reuseExisting && guard.takenBy === 'folder') {
      const existing = await deps.readModel.folders.childNamed(parentType, parentId, input.name);
      if (existing) {
        if (!metadata) return { append: [], result: existing._id };
        const folder = await loadFolder(deps, attempt, existing._id);
        folder.decide({ type: 'SetFolderMetadata', data: { metadata, allowNull: false, now: girderTime() } });
        return { append: [folder], result: existing._id };
      }
    }
    // Girder's order: name and sibling checks (on save) before the metadata keys (an empty name is never taken).
    refuseTakenSiblingName(guard.takenBy);
    const folder = attempt.create(folderStream(folderId), folderDecider, folderStateFor(folderId));
    folder.decide({
      type: 'CreateFolder',
      data: {
        folderId,
        name: input.name,
        description: input.description,
        parentType,
        parentId,
        creatorId: input.creatorId,
        created,
        ...acl,
        ...(metadata ? { metadata } : {}),
      },
    });
    return { append: [guard.claim(attempt, 'folder', folderId), folder], result: folderId };
  });
}

/** The last event of a stream (revision and position), or null when the stream is empty. */
async function lastEventOf(deps: StreamDeps, streamId: string): Promise<{ revision: bigint; position: bigint } | null> {
  try {
    for await (const event of deps.eventStore.readStream(streamId, { direction: 'backwards', maxCount: 1 })) {
      return { revision: event.revision, position: event.position };
    }
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return null;
}

export interface UpdateFolderInput {
  folderId: string;
  name?: string;
  description?: string;
  metadata?: Metadata;
  /** The destination, loaded at WRITE by the route: given only when both `parentType` and `parentId` were passed. */
  move?: LoadedParent;
}

/**
 * `PUT /folder/:id`: name/description (`updated` always advances), metadata merge, and a move when a different parent
 * is given, decided together and appended atomically. Girder saves the rename and metadata before attempting the move
 * and keeps them when the move fails; here nothing is saved when any part fails. Sibling-name uniqueness is checked
 * for the folder's final name under its final parent when either changed (a move into a parent that already holds
 * that name is refused), with the name's reservation stream appended to in the same atomic write.
 */
export async function updateFolder(deps: StreamDeps, input: UpdateFolderInput, meta: RequestMeta): Promise<void> {
  const { commands } = deps;
  await commands.handleGroup(meta, async (attempt) => {
    const now = girderTime();
    const folder = await loadFolder(deps, attempt, input.folderId);
    const before = folder.state;
    folder.decide({
      type: 'UpdateFolder',
      data: {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        now,
      },
    });
    const append: AnyDecidedStream[] = [];

    if (input.move) {
      const parent = input.move;
      if (parent.type !== folder.state.parentType || parent.doc._id !== folder.state.parentId) {
        // Serialise with every other move, and check against a read model that reflects all of them.
        const last = await lastEventOf(deps, FOLDER_TREE_STREAM);
        if (last) await deps.projector.waitFor(last.position);
        const targetPath =
          parent.type === 'folder'
            ? [...(await deps.readModel.folders.ancestorIds(parent.doc._id)), parent.doc._id]
            : [];
        folder.decide({
          type: 'MoveFolder',
          data: { parentType: parent.type, parentId: parent.doc._id, targetPath, now },
        });
        const tree = attempt.at(FOLDER_TREE_STREAM, folderTreeDecider, last ? last.revision : 'no_stream');
        tree.decide({
          type: 'MarkFolderMoved',
          data: { folderId: input.folderId, parentType: parent.type, parentId: parent.doc._id },
        });
        append.push(tree);
      }
    }

    const after = folder.state;
    if (after.parentId !== before.parentId || after.name !== before.name) {
      const guard = await guardSiblingName(commands, siblingLookup(deps), after.parentType, after.parentId, after.name);
      refuseTakenSiblingName(guard.takenBy);
      append.push(guard.claim(attempt, 'folder', input.folderId));
    }
    append.push(folder);
    return { append, result: undefined };
  });
}

/** Runs one decider command on a folder stream (load → decide → append, retried on conflict). */
async function decideFolder(
  deps: StreamDeps,
  folderId: string,
  command: (now: string) => FolderCommand,
  meta: RequestMeta,
): Promise<void> {
  await deps.commands.handleGroup(meta, async (attempt) => {
    const folder = await loadFolder(deps, attempt, folderId);
    folder.decide(command(girderTime()));
    return { append: [folder], result: undefined };
  });
}

/** `PUT /folder/:id/metadata`: merge (nulls delete keys unless `allowNull`), then every top-level key is validated. */
export function setFolderMetadata(
  deps: StreamDeps,
  folderId: string,
  metadata: Metadata,
  allowNull: boolean,
  meta: RequestMeta,
): Promise<void> {
  return decideFolder(
    deps,
    folderId,
    (now) => ({ type: 'SetFolderMetadata', data: { metadata, allowNull, now } }),
    meta,
  );
}

/** `DELETE /folder/:id/metadata`: the names are validated, then removed (absent ones ignored). */
export function deleteFolderMetadata(
  deps: StreamDeps,
  folderId: string,
  fields: string[],
  meta: RequestMeta,
): Promise<void> {
  return decideFolder(deps, folderId, (now) => ({ type: 'DeleteFolderMetadata', data: { fields, now } }), meta);
}

/**
 * `PUT /folder/:id/access`: replaces the ACL, and `public`/`publicFlags` when given; `updated` is kept. With `recurse`
 * one event on this folder's stream carries the change and the actor, and the projection applies it to the reachable
 * subtree in one read-model transaction (docs/subtree-operations.md).
 */
export function setFolderAccess(
  deps: StreamDeps,
  folderId: string,
  change: { access: AccessList; public?: boolean; publicFlags?: string[]; recurse?: { actor: Viewer } },
  meta: RequestMeta,
): Promise<void> {
  return decideFolder(deps, folderId, () => ({ type: 'SetFolderAccess', data: change }), meta);
}
