import type { RequestMeta } from './requestMeta';
import { reclaimBlobs } from './blobReclaim';
import { guardSiblingName, type NameGuard } from './siblingNames';
import { inheritedAcl, loadFolder, siblingLookup } from './folderCommands';
import {
  checkFolderName,
  folderDecider,
  folderNameCandidate,
  folderStateFor,
  folderStream,
  type FolderCommand,
} from '../domain/folder';
import type { Viewer } from '../domain/access';
import { RestError, ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import type { LoadedParent } from '../queries/models';
import type { BlobDeps } from './writeDeps';

/**
 * Subtree operations: delete a folder, empty it, copy it. Each is ONE event (docs/subtree-operations.md) decided on
 * one folder stream and appended atomically; the projection applies it to the whole subtree in one read-model
 * transaction. The event is the commit point: before it nothing changed, after it the result is complete (a crash in
 * between is caught up by the projector on restart). Bytes are the only thing outside: blobs that no file references
 * any more are reclaimed after the commit, and the startup sweep removes what a crash left unreclaimed.
 */

/** Waits until the read models reflect everything appended so far (so that subtree reads see the latest files). */
async function catchUp(deps: BlobDeps): Promise<void> {
  await deps.projector.waitFor(await deps.eventStore.headPosition());
}

/** Refuses a folder the read model no longer has (deleted along with an ancestor): `Invalid folder id (<id>).` */
async function requireInReadModel(deps: BlobDeps, folderId: string): Promise<void> {
  if (!(await deps.readModel.folders.get(folderId))) throw new RestError(`Invalid folder id (${folderId}).`);
}

/**
 * Appends `command`'s event to the folder's stream, reading the blob ids of every file in the subtree as the read
 * model stood right before (what may become unreferenced), and reclaims those blobs after the commit. With
 * `keepsEveryFile` (the event keeps every file it removes for restore) and a retention window, none of them can be
 * reclaimed now (each is retained until the window ends, then the retention purge reclaims it): the subtree-wide read,
 * a chunked walk of the whole subtree on the event loop, is skipped.
 */
async function removeUnder(
  deps: BlobDeps,
  folderId: string,
  command: (opId: string) => FolderCommand,
  meta: RequestMeta,
  keepsEveryFile: boolean,
): Promise<void> {
  const reclaimable = !keepsEveryFile || deps.config.blobRetentionDays === 0;
  const blobIds = await deps.commands.handleGroup(meta, async (attempt) => {
    const folder = await loadFolder(deps, attempt, folderId);
    folder.decide(command(newId()));
    await catchUp(deps);
    await requireInReadModel(deps, folderId);
    return {
      append: [folder],
      result: reclaimable ? await deps.readModel.subtree.blobIdsInSubtree(folderId) : [],
    };
  });
  // Bytes of a file added to the subtree between the read above and the commit are left to the startup sweep.
  await reclaimBlobs(deps, blobIds);
}

/**
 * `DELETE /folder/:id`: the folder, every descendant folder (all of them, not permission filtered), their items and
 * files, in one FolderDeleted event; then the bytes nothing references any more.
 */
export function deleteFolder(deps: BlobDeps, folderId: string, meta: RequestMeta): Promise<void> {
  // The folder and every descendant are kept for restore, with their items' files.
  return removeUnder(deps, folderId, (opId) => ({ type: 'DeleteFolder', data: { opId } }), meta, true);
}

/** `DELETE /folder/:id/contents`: everything under the folder (FolderContentsCleared); the folder stays. */
export function clearFolderContents(deps: BlobDeps, folderId: string, meta: RequestMeta): Promise<void> {
  // The items directly in the folder are not kept (only a removed folder can be restored): their bytes may go now.
  return removeUnder(deps, folderId, (opId) => ({ type: 'ClearFolderContents', data: { opId } }), meta, false);
}

export interface CopyFolderInput {
  sourceId: string;
  /** The new parent (loaded by the route: with WRITE when given, else the source's own parent without a check). */
  parent: LoadedParent;
  /** Absent or empty: the source's name. */
  name?: string;
  /** Absent: the source's description. */
  description?: string;
  /** `true`/`false`: explicit; `original`: the source's value; absent: inherited as on creation. */
  public?: 'true' | 'false' | 'original';
  copier: Viewer;
}

/** Finds the first free name among `name`, `name (1)`, … under the parent and returns it with its guard. */
async function freeName(
  deps: BlobDeps,
  parentType: LoadedParent['type'],
  parentId: string,
  name: string,
): Promise<{ name: string; guard: NameGuard }> {
  const lookup = siblingLookup(deps);
  for (let n = 0; ; n++) {
    const candidate = folderNameCandidate(name, n);
    const guard = await guardSiblingName(deps.commands, lookup, parentType, parentId, candidate);
    if (guard.takenBy === null) return { name: candidate, guard };
  }
}

/**
 * `POST /folder/:id/copy` (Girder's copyFolder): a new folder under `parent` (name defaulting to the source's and
 * renamed `<name> (n)` on a collision with a sibling folder or item; description defaulting to the source's; `public`
 * as asked, else inherited, else the source's; the new parent's ACL plus the copier's ADMIN; the source's metadata and
 * publicFlags), and set-wise copies of its items and readable subfolders, all in one FolderCopied event on the new
 * folder's stream with the final name's claim. Resolves with the new folder's id once the read models show it.
 */
export async function copyFolder(deps: BlobDeps, input: CopyFolderInput, meta: RequestMeta): Promise<string> {
  const { commands } = deps;
  const folderId = newId();
  const parentType = input.parent.type;
  const parentId = input.parent.doc._id;
  await commands.handleGroup(meta, async (attempt) => {
    const source = await loadFolder(deps, attempt, input.sourceId);
    const s = source.state;
    if (!s.exists) throw new RestError(`Invalid folder id (${input.sourceId}).`);
    const wanted = input.name ? checkFolderName(input.name) : s.name;
    const explicit =
      input.public === 'true'
        ? true
        : input.public === 'false'
          ? false
          : input.public === 'original'
            ? s.public
            : undefined;
    const acl = inheritedAcl(input.parent, input.copier.id, explicit);
    // Girder copies every source field the new document lacks: a copy under a user without `public` takes the source's.
    const isPublic = acl.public ?? s.public;
    const { name, guard } = await freeName(deps, parentType, parentId, wanted);
    await requireInReadModel(deps, input.sourceId);
    const copy = attempt.create(folderStream(folderId), folderDecider, folderStateFor(folderId));
    copy.decide({
      type: 'CopyFolder',
      data: {
        opId: newId(),
        sourceId: s.folderId,
        folderId,
        parentType,
        parentId,
        name,
        description: input.description ?? s.description,
        ...(isPublic !== undefined ? { public: isPublic } : {}),
        ...(s.publicFlags !== undefined ? { publicFlags: s.publicFlags } : {}),
        access: acl.access,
        creatorId: input.copier.id,
        created: girderTime(),
        meta: s.meta,
        copier: input.copier,
      },
    });
    return { append: [guard.claim(attempt, 'folder', folderId), copy], result: undefined };
  });
  if (!(await deps.readModel.folders.get(folderId))) {
    // The projection skipped the copy: the source or the destination was deleted concurrently, before it in the log.
    if (!(await deps.readModel.folders.get(input.sourceId)))
      throw new RestError(`Invalid folder id (${input.sourceId}).`);
    throw new ValidationError(`No such ${parentType}: ${parentId}`, 'id');
  }
  return folderId;
}
