import type { Resource } from './routeTable';
import { systemResource } from './resources/system';
import { systemMaintenanceRoutes } from './resources/systemMaintenance';
import { userResource } from './resources/user';
import { apiKeyResource } from './resources/apiKey';
import { collectionResource } from './resources/collection';
import { folderResource } from './resources/folder';
import { notificationResource } from './resources/notification';
import { itemResource } from './resources/item';
import { fileResource } from './resources/file';
import { fileHashsumRoutes } from './resources/fileHashsum';
import { resourceResource } from './resources/resource';
import { eventsResource } from './resources/events';
import { groupResource } from './resources/group';
import { tokenResource } from './resources/token';
import { assetstoreResource } from './resources/assetstore';
import { collectionQuotaRoutes, userQuotaRoutes } from './resources/quota';

/** Every resource mounted under /api/v1. */
export const apiResources: Resource[] = [
  // Girder's maintenance routes of `system` (configuration, uploads, check, log) are a module of their own.
  { ...systemResource, routes: [...systemResource.routes, ...systemMaintenanceRoutes] },
  // Girder's user_quota plugin adds its routes to `user` and `collection` (src/http/resources/quota.ts).
  { ...userResource, routes: [...userResource.routes, ...userQuotaRoutes] },
  apiKeyResource,
  { ...collectionResource, routes: [...collectionResource.routes, ...collectionQuotaRoutes] },
  folderResource,
  notificationResource,
  itemResource,
  // Girder's hashsum_download plugin adds its routes to `file` (a separate module: it builds on file.ts's download).
  { ...fileResource, routes: [...fileResource.routes, ...fileHashsumRoutes] },
  resourceResource,
  eventsResource,
  groupResource,
  tokenResource,
  assetstoreResource,
];
