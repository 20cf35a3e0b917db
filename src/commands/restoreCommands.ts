import type { RequestMeta } from './requestMeta';
import { guardSiblingName, type NameGuard } from './siblingNames';
import { loadFolder, siblingLookup } from './folderCommands';
import { retentionStart } from './blobReclaim';
import { folderNameCandidate } from '../domain/folder';
import { AccessLevel, accessDeniedMessage, hasAccess, type Viewer } from '../domain/access';
import { AccessDeniedError, RestError, ValidationError } from '../domain/errors';
import { isObjectId, newId } from '../domain/ids';
import type { LoadedParent } from '../queries/models';
import type { ParentType } from '../domain/parents';
import type { BlobDeps } from './writeDeps';

/**
 * `POST /folder/:id/restore`: brings back a folder a subtree operation removed (its own delete, a delete of an
 * ancestor, the emptying of an ancestor) with everything that operation removed below it: subfolders, items, files.
 * One FolderRestored event on the folder's stream; the projection moves the rows the read model kept at the removal
 * back set-wise (src/infra/readmodel/sqlite/historyStore.ts). The bytes are there for BLOB_RETENTION_DAYS after the
 * removal; the blobs are held while the restore commits, so the retention purge cannot take them meanwhile.
 */

export interface RestoreFolderInput {
  folderId: string;
  viewer: Viewer;
  /** Where to restore it, loaded at WRITE by the route; absent: the parent it had when removed. */
  parent?: LoadedParent;
}

const PURGED_MESSAGE = "The folder's files were purged; it can no longer be restored.";

/** The first free name among `name`, `name (1)`, … under the parent, with the guard whose claim takes it. */
async function freeName(
  deps: BlobDeps,
  parentType: ParentType,
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

/** The parent the folder had when removed, if it still exists. */
async function originalParent(deps: BlobDeps, type: ParentType, id: string): Promise<LoadedParent | null> {
  const rm = deps.readModel;
  if (type === 'folder') {
    const doc = await rm.folders.get(id);
    return doc && { type, doc };
  }
  if (type === 'user') {
    const doc = await rm.users.get(id);
    return doc && { type, doc };
  }
  const doc = await rm.collections.get(id);
  return doc && { type, doc };
}

/**
 * Restores the folder; resolves with its id once the read models show it. Allowed to site admins and to whoever had
 * ADMIN on the folder when it was removed. The name is kept unless a sibling took it meanwhile (`name (1)`, …).
 */
export async function restoreFolder(deps: BlobDeps, input: RestoreFolderInput, meta: RequestMeta): Promise<string> {
  const history = deps.readModel.history;
  const { folderId, viewer } = input;
  if (!isObjectId(folderId)) throw new RestError(`Invalid folder id (${folderId}).`);
  await deps.projector.waitFor(await deps.eventStore.headPosition());
  const live = await deps.readModel.folders.get(folderId);
  const removed = live ? null : await history.removedFolder(folderId);
  const doc = live ?? removed?.doc;
  if (!doc) throw new RestError(`Invalid folder id (${folderId}).`);
  // Access first, so that whether a folder exists or is deleted is told only to whoever may restore it.
  if (!viewer.admin && !hasAccess(doc, viewer, AccessLevel.ADMIN))
    throw new AccessDeniedError(accessDeniedMessage(AccessLevel.ADMIN, 'folder', folderId, viewer));
  if (!removed) throw new RestError('The folder is not deleted.');

  const parent = input.parent ?? (await originalParent(deps, removed.doc.parentCollection, removed.doc.parentId));
  if (!parent) throw new ValidationError('The original parent no longer exists; pass parentId.', 'parentId');

  const { blobIds } = await history.restorable(folderId, removed.position);
  const held: string[] = [];
  try {
    for (const blobId of blobIds) {
      await deps.blobs.hold(blobId);
      held.push(blobId);
    }
    // Past the retention period the bytes may be gone at any moment (and are, once the purge ran).
    if (removed.at < retentionStart(deps)) throw new RestError(PURGED_MESSAGE);
    for (const blobId of blobIds) if (!(await deps.blobs.exists(blobId))) throw new RestError(PURGED_MESSAGE);

    await deps.commands.handleGroup(meta, async (attempt) => {
      const folder = await loadFolder(deps, attempt, folderId);
      await deps.projector.waitFor(await deps.eventStore.headPosition());
      if (await deps.readModel.folders.get(folderId)) throw new RestError('The folder is not deleted.');
      const current = await history.removedFolder(folderId);
      if (current?.position !== removed.position) throw new RestError(`Invalid folder id (${folderId}).`);
      const { name, guard } = await freeName(deps, parent.type, parent.doc._id, removed.doc.name);
      const d = removed.doc;
      const removedWithAncestor = !folder.state.deleted;
      folder.startFrom({ ...folder.state, folderId });
      folder.decide({
        type: 'RestoreFolder',
        data: {
          opId: newId(),
          deletedPosition: removed.position,
          removedWithAncestor,
          parentType: parent.type,
          parentId: parent.doc._id,
          name,
          snapshot: {
            description: d.description,
            ...(d.public !== undefined ? { public: d.public } : {}),
            ...(d.publicFlags !== undefined ? { publicFlags: d.publicFlags } : {}),
            access: d.access,
            meta: d.meta,
            creatorId: d.creatorId,
            created: d.created,
            updated: d.updated,
          },
        },
      });
      return { append: [guard.claim(attempt, 'folder', folderId), folder], result: undefined };
    });
  } finally {
    for (const blobId of held) deps.blobs.release(blobId);
  }
  if (!(await deps.readModel.folders.get(folderId))) {
    // The projection skipped the restore: the new parent was deleted concurrently, before it in the log.
    throw new ValidationError(`No such ${parent.type}: ${parent.doc._id}`, 'id');
  }
  return folderId;
}
