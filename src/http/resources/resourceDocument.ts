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

/** The types `GET /resource/:id` answers, each with the view its own route answers with. */
const VIEWS = {
  folder: (doc: LoadedModels['folder'], viewer: Viewer | null) => folderView(doc, viewer),
  item: (doc: LoadedModels['item']) => itemView(doc.item),
  file: (doc: LoadedModels['file']) => fileView(doc.file),
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
  if (!(await findModel(services.readModel, kind, id))) return null;
  // Found: loaded again with the READ check (a resource removed in between is the usual `Invalid <type> id`).
  const doc = await loadModelAt(services.readModel, kind, id, viewer, AccessLevel.READ);
  return (VIEWS[kind] as (doc: unknown, viewer: Viewer | null) => Record<string, unknown>)(doc, viewer);
}

/** `GET /resource/:id` (Girder's getResource, site administrators only): any resource by id and type. */
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
];
