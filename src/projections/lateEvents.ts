import type { ParentType } from '../domain/parents';
import type { ProjectionReads, ReadModelTx, RowRef } from '../ports/readModel';

/**
 * What a late event means. The log may order a delete before an event that was decided while its folder, item or
 * parent still stood: the two requests raced (the event's stream knew nothing of the delete). The thing is then gone
 * with the delete, and the late event must neither resurrect it nor stop the projector. The rule, once for every
 * adapter and every event:
 *  - a creation (or restore) under a parent that is gone creates nothing: the new thing went with its parent;
 *  - a change of something that is gone (fields, metadata, access, a file of an item) changes nothing;
 *  - a move of something that is gone moves nothing; a move into a parent that is gone takes the moved thing with
 *    the parent: it is removed as the delete removed the parent's subtree;
 *  - a subtree event (delete, empty, copy) naming a folder that is gone, or a copy into a parent that is gone, does
 *    nothing.
 * Subtree events decide it in their plan (foldersProjection.ts), from plain reads ({@link folderPresent},
 * {@link parentPresent}), as they plan anyway. Creations, changes and moves decide it with a write conditional on a
 * row's presence (`tx.ifPresent`, {@link createUnder}, {@link changeOf}, {@link moveInto}): planning them would read
 * before every event and split every projection batch, while the adapter can check presence where the write runs.
 */

const row = (kind: RowRef['kind'], id: string): RowRef => ({ kind, id });
export const folderRow = (id: string): RowRef => row('folder', id);
export const itemRow = (id: string): RowRef => row('item', id);

/** The row of a parent a delete can remove; users are never removed, so nothing guards a creation under one. */
function removableParent(parentType: ParentType, parentId: string): RowRef | null {
  return parentType === 'user' ? null : row(parentType, parentId);
}

type Writes = (tx: ReadModelTx) => void;

/** A creation under a parent: nothing when the parent is gone (the new thing went with it). */
export function createUnder(tx: ReadModelTx, parentType: ParentType, parentId: string, create: Writes): void {
  const parent = removableParent(parentType, parentId);
  if (parent) tx.ifPresent(parent, create);
  else create(tx);
}

/** A change of a folder, item or file (of an item: its row): nothing when it is gone. */
export function changeOf(tx: ReadModelTx, changed: RowRef, change: Writes): void {
  tx.ifPresent(changed, change);
}

/**
 * A move under a new parent: nothing when the moved thing is gone; when the new parent is gone, the moved thing goes
 * with it (`remove`: the moved subtree, or item, removed as a delete removes it).
 */
export function moveInto(
  tx: ReadModelTx,
  moved: RowRef,
  to: { parentType: ParentType; parentId: string },
  writes: { move: Writes; remove: Writes },
): void {
  const parent = removableParent(to.parentType, to.parentId);
  tx.ifPresent(moved, (tx) => {
    if (parent) tx.ifPresent(parent, writes.move, writes.remove);
    else writes.move(tx);
  });
}

/** Whether a folder is still in the read model (for the plan of a subtree event). */
export async function folderPresent(reads: ProjectionReads, folderId: string): Promise<boolean> {
  return (await reads.folders.get(folderId)) !== null;
}

/** Whether a parent (folder, collection or user) is still in the read model (for the plan of a copy). */
export async function parentPresent(
  reads: ProjectionReads,
  parentType: ParentType,
  parentId: string,
): Promise<boolean> {
  switch (parentType) {
    case 'folder':
      return folderPresent(reads, parentId);
    case 'collection':
      return (await reads.collections.get(parentId)) !== null;
    case 'user':
      return (await reads.users.get(parentId)) !== null;
  }
}
