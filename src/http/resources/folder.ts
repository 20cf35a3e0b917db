import type { Resource } from '../routeTable';
import { folderReadRoutes } from './folderRead';
import { folderWriteRoutes } from './folderWrite';
import { folderDownloadRoutes } from './folderDownload';
import { folderSubtreeRoutes } from './folderSubtree';

export const folderResource: Resource = {
  name: 'folder',
  description: 'Folders: the hierarchy that holds items.',
  routes: [...folderReadRoutes, ...folderWriteRoutes, ...folderDownloadRoutes, ...folderSubtreeRoutes],
};
