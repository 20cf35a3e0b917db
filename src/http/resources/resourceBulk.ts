import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { Scope } from '../../domain/scopes';
import { param } from '../params';
import { AccessLevel } from '../../domain/access';
import { RestError } from '../../domain/errors';
import { model } from '../modelParams';
import { planCopy, planDelete, planMove } from '../../commands/resourceSetCommands';
import { signedInViewer } from '../principal';

/**
 * Girder's multi-resource operations (api/v1/resource.py) that the web client's "checked items" menu uses: move,
 * copy and delete a set of folders and items, `resources` being `{"folder": [ids], "item": [ids]}`. Unlike Girder,
 * every resource is checked before the first write (commands/resourceSetCommands.ts): a refusal changes nothing.
 */
/** The ids per resource type: only the types the request names are present. */
type ResourceSet = Partial<Record<string, string[]>>;
const PARENT_TYPES = ['folder', 'user', 'collection'] as const;

function resourceSet(allowed: readonly string[]) {
  return (value: unknown): ResourceSet => {
    const set = value as Record<string, unknown>;
    const invalid = Object.keys(set).filter((kind) => !allowed.includes(kind));
    if (invalid.length) throw new RestError(`Invalid resource types requested: ${invalid.join(', ')}`);
    for (const ids of Object.values(set)) {
      if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string'))
        throw new RestError('Invalid resources format.');
    }
    if (Object.values(set).every((ids) => (ids as string[]).length === 0))
      throw new RestError('No resources specified.');
    return set as ResourceSet;
  };
}

const resourcesParam = (allowed: readonly string[], what: string) =>
  param.json('resources', {
    required: true,
    shape: 'object',
    validate: resourceSet(allowed),
    description: `A JSON-encoded set of resources to ${what}. Each type is a list of ids. For example: {"item": [(item id 1), (item id2)], "folder": [(folder id 1)]}.`,
  });

const parentParams = [
  param.enum('parentType', PARENT_TYPES, {
    required: true,
    description: 'Parent type for the new parent of these resources.',
  }),
  param.requiredString('parentId', { description: 'Parent ID for the new parent of these resources.' }),
  param.flag('progress', false, {
    description: 'Whether to record progress on this task (accepted; no progress is recorded).',
  }),
];

/** Girder's _prepareMoveOrCopy: items go into folders only (checked before anything is loaded). */
function itemsIntoFolders(params: { resources: ResourceSet; parentType: (typeof PARENT_TYPES)[number] }): void {
  if ((params.resources.item ?? []).length && params.parentType !== 'folder')
    throw new RestError('Invalid parentType.');
}

export const resourceBulkRoutes: RouteDef[] = [
  route({
    method: 'PUT',
    path: 'move',
    summary: 'Move a set of items and folders.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [resourcesParam(['folder', 'item'], 'move'), ...parentParams],
    validate: itemsIntoFolders,
    models: {
      parent: model.parent(AccessLevel.WRITE),
      resources: model.resources('resources', AccessLevel.WRITE),
    },
    async handler({ models: { parent, resources }, services, meta }) {
      const writes = await planMove(services, resources, parent, meta);
      await writes();
      return null;
    },
  }),
  route({
    method: 'POST',
    path: 'copy',
    summary: 'Copy a set of items and folders.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [resourcesParam(['folder', 'item'], 'copy'), ...parentParams],
    validate: itemsIntoFolders,
    models: {
      parent: model.parent(AccessLevel.WRITE),
      resources: model.resources('resources', AccessLevel.READ),
    },
    async handler({ models: { parent, resources }, services, principal, meta }) {
      const writes = planCopy(services, resources, parent, signedInViewer(principal), meta);
      await writes();
      return null;
    },
  }),
  route({
    method: 'DELETE',
    path: '',
    summary: 'Delete a set of items, folders, or collections.',
    access: 'user',
    scope: [Scope.DATA_OWN],
    params: [
      resourcesParam(['collection', 'folder', 'item'], 'delete'),
      param.flag('progress', false, {
        description: 'Whether to record progress on this task (accepted; no progress is recorded).',
      }),
    ],
    models: { resources: model.resources('resources', AccessLevel.ADMIN) },
    async handler({ models: { resources }, services, meta }) {
      const writes = await planDelete(services, resources, meta);
      await writes();
      return null;
    },
  }),
];
