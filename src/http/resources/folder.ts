import type { Resource } from '../routeTable';

export const folderResource: Resource = {
  name: 'folder',
  description: 'Folders: the hierarchy that holds items.',
  routes: [],
};
