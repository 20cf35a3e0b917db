import type { ParentType } from '../domain/parents';
import type { ProjectionReads } from '../ports/readModel';

/**
 * What a late event means: the log orders a delete before an event that was decided while the folder (or its parent)
 * still stood: the two requests raced. The folder is then gone with the delete, so the late event changes nothing
 * (it is skipped, instead of stopping the projector). Decided here, in the plan of the handlers of subtree events
 * (delete, empty, copy; foldersProjection.ts), from plain reads, once for every adapter.
 */
export async function folderPresent(reads: ProjectionReads, folderId: string): Promise<boolean> {
  return (await reads.folders.get(folderId)) !== null;
}

/** Whether a parent (folder, collection or user) is still in the read model. */
export async function parentPresent(reads: ProjectionReads, parentType: ParentType, parentId: string): Promise<boolean> {
  switch (parentType) {
    case 'folder':
      return folderPresent(reads, parentId);
    case 'collection':
      return (await reads.collections.get(parentId)) !== null;
    case 'user':
      return (await reads.users.get(parentId)) !== null;
  }
}
