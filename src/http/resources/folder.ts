import type { Resource } from '../routeTable';
import { folderReadRoutes } from './folderRead';
import { folderWriteRoutes } from './folderWrite';
import { folderDownloadRoutes } from './folderDownload';
import { folderSubtreeRoutes } from './folderSubtree';
import { folderHistoryRoutes } from './folderHistory';
import { folderEventRoutes } from './events';

export const folderResource: Resource = {
  name: 'folder',
  description: 'Folders: the hierarchy that holds items.',
  routes: [
    ...folderReadRoutes,
    ...folderWriteRoutes,
    ...folderDownloadRoutes,
    ...folderSubtreeRoutes,
    ...folderHistoryRoutes,
    ...folderEventRoutes,
  ],
};
