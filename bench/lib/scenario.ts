import { Api } from './api';
import type { ServerProcess } from './serverProcess';
import { seedChildFolders } from './seedFolders';

/**
 * The shared set-up of the HTTP benchmarks: a site admin (the first user), an ordinary user, and a folder of the
 * admin's that the ordinary user may read only through its ACL (not public), so listings run the ACL filter.
 */
export interface Scenario {
  admin: Api;
  user: Api;
  adminId: string;
  userId: string;
  /** The admin's "Public" folder (creates go there). */
  publicFolderId: string;
}

export async function scenario(server: ServerProcess): Promise<Scenario> {
  const admin = new Api(server.api);
  const user = new Api(server.api);
  const a = await admin.registerAsOwner('benchadmin');
  const u = await user.register('benchuser');
  user.token = u.token;
  return { admin, user, adminId: a.id, userId: u.id, publicFolderId: a.publicFolderId };
}

/**
 * A private folder of the admin's, readable by the ordinary user through an ACL entry, holding `count` children
 * seeded through the bulk event path; resolves once the service's read models list them all. The children share
 * the folder's ACL; with `userReadsLast`, the ordinary user may read only that many of them, the last in name order
 * (the others are the admin's alone).
 */
export async function folderWithChildren(
  s: Scenario,
  dataDir: string,
  name: string,
  count: number,
  userReadsLast = count,
): Promise<string> {
  const folder = await s.admin.ok('POST', '/folder', {
    parentType: 'user',
    parentId: s.adminId,
    name,
    public: 'false',
  });
  const access = {
    users: [
      { id: s.adminId, level: 2 as const, flags: [] },
      { id: s.userId, level: 0 as const, flags: [] },
    ],
    groups: [],
  };
  await s.admin.ok('PUT', `/folder/${folder._id}/access`, { access: JSON.stringify(access), public: 'false' });
  const adminOnly = { users: [access.users[0]], groups: [] };
  await seedChildFolders(
    dataDir,
    { id: folder._id, access, public: false, creatorId: s.adminId },
    count,
    'child ',
    (n) => (n >= count - userReadsLast ? access : adminOnly),
  );
  await waitForCount(s.admin, folder._id as string, count);
  return folder._id as string;
}

async function waitForCount(api: Api, folderId: string, count: number): Promise<void> {
  for (;;) {
    const { headers } = await api.call('GET', '/folder', { parentType: 'folder', parentId: folderId, limit: 1 });
    if (Number(headers.get('girder-total-count')) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
