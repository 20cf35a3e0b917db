import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { model } from '../modelParams';
import type { Services } from '../../services';
import { AccessLevel, type Viewer } from '../../domain/access';
import { RestError, ValidationError } from '../../domain/errors';
import { isObjectId } from '../../domain/ids';
import { findModel, loadModelAt, type LoadedModels } from '../../queries/models';
import { collectionView, folderView, userView } from '../../queries/views';
import { fileView, itemView } from '../../queries/itemQueries';
import { groupView } from '../../queries/groupQueries';
import { girderTime } from '../../domain/time';
import { setTimestamps, type TimedResource } from '../../commands/timestampCommands';
import type { RequestMeta } from '../../commands/requestMeta';

/** The types `GET /resource/:id` answers, each with the view its own route answers with. */
const VIEWS = {
  folder: (doc: LoadedModels['folder'], viewer: Viewer | null) => folderView(doc, viewer),
  item: (doc: LoadedModels['item']) => itemView(doc.item),
  file: (doc: LoadedModels['file'], viewer: Viewer | null) => fileView(doc.file, viewer),
  collection: (doc: LoadedModels['collection'], viewer: Viewer | null) => collectionView(doc, viewer),
  user: (doc: LoadedModels['user'], viewer: Viewer | null) => userView(doc, viewer),
  group: (doc: LoadedModels['group'], viewer: Viewer | null) => groupView(doc, viewer),
};
type ViewedKind = keyof typeof VIEWS;

/**
 * Girder's `_getResource`: the model named by `type` (another name is `Invalid resources format.`), loaded at READ;
 * a malformed id is Girder's `Invalid ObjectId: <id>` and an id naming nothing answers null, as its `load` does.
 */
async function resourceDocument(services: Services, type: string, id: string, viewer: Viewer | null) {
  if (!Object.hasOwn(VIEWS, type)) throw new RestError('Invalid resources format.');
  if (!isObjectId(id)) throw new ValidationError(`Invalid ObjectId: ${id}`, 'id');
  const kind = type as ViewedKind;
  if (!(await findModel(services, kind, id))) return null;
  // Found: loaded again with the READ check (a resource removed in between is the usual `Invalid <type> id`).
  const doc = await loadModelAt(services, kind, id, viewer, AccessLevel.READ);
  return (VIEWS[kind] as (doc: unknown, viewer: Viewer | null) => Record<string, unknown>)(doc, viewer);
}

/**
 * The types whose times `PUT /resource/:id/timestamp` sets. Girder also sets a user's created time; the user's stream
 * is being reworked by the account routes of issue 30, so users are refused here with a message that says so.
 */
const TIMED = ['folder', 'item', 'file', 'collection', 'group'] as const;
type TimedKind = (typeof TIMED)[number];

/**
 * Girder's setTimestamp: the model named by `type` loaded at WRITE (`No such <type>: <id>`), a time only for a field
 * the document has (a file has no updated time: `Resource has no "updated" field.`), then saved and shown.
 */
async function setResourceTimestamps(
  ctx: { services: Services; viewer: Viewer | null; meta: RequestMeta },
  type: string,
  id: string,
  times: { created?: number; updated?: number },
) {
  const { services, viewer, meta } = ctx;
  if (!Object.hasOwn(VIEWS, type)) throw new RestError('Invalid resources format.');
  if (!(TIMED as readonly string[]).includes(type))
    throw new RestError(`The times of a ${type} cannot be set here (only ${TIMED.join(', ')}).`);
  if (!isObjectId(id)) throw new ValidationError(`Invalid ObjectId: ${id}`, 'id');
  const kind = type as TimedKind;
  const doc = await loadModelAt(services, kind, id, viewer, AccessLevel.WRITE, 'no-such');
  if (kind === 'file' && times.updated !== undefined) throw new RestError('Resource has no "updated" field.');
  const given = {
    ...(times.created !== undefined ? { created: girderTime(new Date(times.created)) } : {}),
    ...(times.updated !== undefined ? { updated: girderTime(new Date(times.updated)) } : {}),
  };
  const target: TimedResource =
    kind === 'file' ? { type: 'file', id, itemId: (doc as LoadedModels['file']).file.itemId } : { type: kind, id };
  await setTimestamps(services, target, given, meta);
  // As the read model now shows it (the command waited for the projection).
  return resourceDocument(services, kind, id, viewer);
}

/**
 * `GET /resource/:id` (Girder's getResource: any resource by id and type) and `PUT /resource/:id/timestamp` (its
 * setTimestamp), both for site administrators only.
 */
export const resourceDocumentRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: ':id',
    summary: 'Get any resource by ID.',
    access: 'admin',
    params: [
      param.requiredString('type', {
        description: 'The type of the resource (folder, item, file, collection, user or group).',
      }),
    ],
    models: {
      resource: model.checkedByRead(
        'named by the type parameter',
        AccessLevel.READ,
        'the model named by type, at READ; an id naming nothing answers null',
      ),
    },
    handler: ({ path, params, services, principal }) =>
      resourceDocument(services, params.type, path.id, principal.viewer),
  }),
  route({
    method: 'PUT',
    path: ':id/timestamp',
    summary: 'Set the created or updated timestamp for a resource.',
    access: 'admin',
    params: [
      param.requiredString('type', {
        description: 'The type of the resource (folder, item, file, collection or group).',
      }),
      param.dateTime('created', { description: 'The new created timestamp (ISO 8601; without an offset, UTC).' }),
      param.dateTime('updated', { description: 'The new updated timestamp (ISO 8601; without an offset, UTC).' }),
    ],
    models: {
      resource: model.checkedByRead(
        'named by the type parameter',
        AccessLevel.WRITE,
        'the model named by type, at WRITE; a miss is `No such <type>: <id>`',
      ),
    },
    handler: ({ path, params, services, principal, meta }) =>
      setResourceTimestamps({ services, viewer: principal.viewer, meta }, params.type, path.id, {
        ...(params.created !== undefined ? { created: params.created } : {}),
        ...(params.updated !== undefined ? { updated: params.updated } : {}),
      }),
  }),
];
