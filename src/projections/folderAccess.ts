import { AccessLevel, type Viewer } from '../domain/access';
import type { ProjectionReads } from '../ports/readModel';

/**
 * Which folders a recursive access change (`PUT /folder/:id/access` with `recurse`) reaches: the folder itself plus
 * every descendant whose path below it crosses only folders on which the actor holds ADMIN (Girder's ADMIN-filtered
 * subtree). A descendant is left out when it, or any folder between it and the folder, denies the actor ADMIN; a
 * site admin reaches the whole subtree. Nothing when the folder is gone (deleted earlier in log order).
 *
 * The rule is decided here, once, from two generic set-wise reads every adapter answers with one indexed query each:
 * the folders under X the actor lacks ADMIN on, then the folders under X outside those. The projection plans with it
 * (foldersProjection.ts); the route counts its progress total with it (`accessChangeSize`, src/queries/folderQueries.ts).
 */
export async function accessTargets(
  folders: ProjectionReads['folders'],
  folderId: string,
  actor: Viewer,
): Promise<string[]> {
  if (!(await folders.get(folderId))) return [];
  if (actor.admin) return [folderId, ...(await folders.idsUnder(folderId))];
  const denied = await folders.idsUnder(folderId, { lacking: { viewer: actor, level: AccessLevel.ADMIN } });
  return [folderId, ...(await folders.idsUnder(folderId, denied.length ? { outside: denied } : {}))];
}
