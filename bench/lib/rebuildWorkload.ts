import { folderWithChildren, scenario } from './scenario';
import type { ServerProcess } from './serverProcess';

/**
 * The rebuild benchmark's event log, written through the running service: `folders` children seeded through the bulk
 * event path under one folder, then 20 of them renamed and given metadata through the API.
 */
export async function writeRebuildWorkload(service: ServerProcess & { dataDir: string }, folders: number) {
  const s = await scenario(service);
  const parent = await folderWithChildren(s, service.dataDir, 'rebuild', folders);
  const children = await s.admin.ok<{ _id: string }[]>('GET', '/folder', {
    parentType: 'folder',
    parentId: parent,
    limit: 20,
  });
  for (const [i, child] of children.entries()) {
    await s.admin.ok('PUT', `/folder/${child._id}`, { name: `renamed ${i}`, description: 'edited' });
    await s.admin.ok('PUT', `/folder/${child._id}/metadata`, { metadata: JSON.stringify({ i, tag: 'bench' }) });
  }
}
