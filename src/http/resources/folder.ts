import type { Resource } from '../routeTable';
import { folderReadRoutes } from './folderRead';
import { folderWriteRoutes } from './folderWrite';

export const folderResource: Resource = {
  name: 'folder',
  description: 'Folders: the hierarchy that holds items.',
  routes: [...folderReadRoutes, ...folderWriteRoutes],
};
