import type { RouteDef } from '../routeTable';
import { deleteMetadataParams, setMetadataParams } from '../metadataParams';
import { route } from '../routeTable';
import { param } from '../params';
import type { Services } from '../../services';
import { AccessLevel, type Viewer } from '../../domain/access';
import type { FolderDoc } from '../../ports/readModel';
import { parseAccessList, parsePublicFlags } from '../../domain/accessList';
import { type Metadata } from '../../domain/metadata';
import {
  createFolder,
  deleteFolderMetadata,
  setFolderAccess,
  setFolderMetadata,
  updateFolder,
} from '../../commands/folderCommands';
import { model } from '../modelParams';
import { folderView } from '../../queries/views';
import { accessChangeSize, currentFolder } from '../../queries/folderQueries';
import { withProgress } from '../../bus/progress';
import { Scope } from '../../domain/scopes';
import { signedInUser, signedInViewer } from '../principal';

const PARENT_TYPES = ['folder', 'user', 'collection'] as const;

/**
 * The folder as the read model now shows it (the command waited for the projection), filtered for the caller. Not
 * re-checked: Girder answers with the saved document even when the change took the caller's own access away.
 */
async function currentView(
  services: Services,
  id: string,
  viewer: Viewer | null,
  extra: (doc: FolderDoc) => Record<string, unknown> = () => ({}),
) {
  const doc = await currentFolder(services, id);
  return folderView(doc, viewer, extra(doc));
}

/**
 * The folder routes that write: create, update/move, metadata and access. Each loads at the level the reference
 * states, runs a command (src/commands/folderCommands.ts) and answers with the folder view.
 */
export const folderWriteRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '',
    summary: 'Create a new folder.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [
      param.enum('parentType', PARENT_TYPES, {
        default: 'folder' as const,
        description: "Type of the folder's parent",
      }),
      param.requiredString('parentId', { description: "The ID of the folder's parent." }),
      param.requiredString('name', { strip: true, description: 'Name of the folder.' }),
      param.string('description', { default: '', strip: true, description: 'Description for the folder.' }),
      param.flag('reuseExisting', false, {
        description: 'Return existing folder if it exists rather than creating a new one.',
      }),
      param.bool('public', {
        description:
          'Whether the folder should be publicly visible. By default, inherits the value from parent folder, or in the case of user or collection parentType, defaults to False.',
      }),
      param.json('metadata', { shape: 'object', description: 'A JSON object containing the metadata keys to add' }),
    ],
    models: { parent: model.parent(AccessLevel.WRITE) },
    async handler({ params, models: { parent }, services, principal, meta }) {
      const id = await createFolder(
        services,
        {
          parent,
          name: params.name,
          description: params.description ?? '',
          reuseExisting: params.reuseExisting,
          ...(params.public !== undefined ? { public: params.public } : {}),
          ...(params.metadata !== undefined ? { metadata: params.metadata as Metadata } : {}),
          creatorId: signedInUser(principal)._id,
        },
        meta,
      );
      // A reused folder is returned without an access check on it (Girder's findOne).
      return currentView(services, id, principal.viewer);
    },
  }),
  route({
    method: 'PUT',
    path: ':id',
    summary: 'Update a folder or move it into a new parent.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [
      param.string('name', { strip: true, description: 'Name of the folder.' }),
      param.string('description', { strip: true, description: 'Description for the folder.' }),
      param.enum('parentType', PARENT_TYPES, { strip: true, description: "Type of the folder's parent" }),
      param.string('parentId', { description: 'Parent ID for the new parent of this folder.' }),
      param.json('metadata', { shape: 'object', description: 'A JSON object containing the metadata keys to add' }),
    ],
    models: {
      folder: model.path('folder', AccessLevel.WRITE),
      destination: model.optionalParent(AccessLevel.WRITE, { note: 'a move: both parentType and parentId' }),
    },
    async handler({ params, models: { folder, destination }, services, principal, meta }) {
      await updateFolder(
        services,
        {
          folderId: folder._id,
          ...(params.name !== undefined ? { name: params.name } : {}),
          ...(params.description !== undefined ? { description: params.description } : {}),
          ...(params.metadata !== undefined ? { metadata: params.metadata as Metadata } : {}),
          ...(destination ? { move: destination } : {}),
        },
        meta,
      );
      return currentView(services, folder._id, principal.viewer);
    },
  }),
  route({
    method: 'PUT',
    path: ':id/metadata',
    summary: 'Set metadata fields on a folder.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: setMetadataParams(),
    models: { folder: model.path('folder', AccessLevel.WRITE) },
    async handler({ params, models: { folder }, services, principal, meta }) {
      await setFolderMetadata(services, folder._id, params.metadata as Metadata, params.allowNull, meta);
      return currentView(services, folder._id, principal.viewer);
    },
  }),
  route({
    method: 'DELETE',
    path: ':id/metadata',
    summary: 'Delete metadata fields on a folder.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: deleteMetadataParams(),
    models: { folder: model.path('folder', AccessLevel.WRITE) },
    async handler({ params, models: { folder }, services, principal, meta }) {
      await deleteFolderMetadata(services, folder._id, params.fields, meta);
      return currentView(services, folder._id, principal.viewer);
    },
  }),
  route({
    method: 'PUT',
    path: ':id/access',
    summary: 'Update the access control list for a folder.',
    access: 'user',
    scope: [Scope.DATA_OWN],
    params: [
      param.json('access', { shape: 'object', required: true, description: 'The JSON-encoded access control list.' }),
      param.json('publicFlags', { shape: 'array', description: 'JSON list of public access flags.' }),
      param.bool('public', { description: 'Whether the folder should be publicly visible.' }),
      param.flag('recurse', false, {
        description: 'Whether the policies should be applied to all subfolders under this folder as well.',
      }),
      param.flag('progress', false, {
        description: 'If recurse is set to True, this controls whether progress notifications will be sent.',
      }),
    ],
    models: { folder: model.path('folder', AccessLevel.ADMIN) },
    async handler({ params, models: { folder }, services, principal, meta }) {
      const access = parseAccessList(params.access);
      const publicFlags = params.publicFlags !== undefined ? parsePublicFlags(params.publicFlags) : undefined;
      const viewer = signedInViewer(principal);
      const change = {
        access,
        ...(params.public !== undefined ? { public: params.public } : {}),
        ...(publicFlags !== undefined ? { publicFlags } : {}),
        ...(params.recurse ? { recurse: { actor: viewer } } : {}),
      };
      // Girder counts (ADMIN-filtered subfolders) and reports only when both progress and recurse are set. The
      // subtree is updated in one read-model transaction: the count moves with what the bulk worker reports for a
      // large one, and is set to the total when it commits.
      await withProgress(
        services,
        {
          on: params.progress && params.recurse,
          userId: viewer.id,
          title: 'Updating permissions',
          message: 'Calculating progress...',
        },
        async (progress) => {
          const total = progress.on ? await accessChangeSize(services, folder._id, viewer) : 0;
          await progress.update({ total });
          await progress.following(meta.requestId, () => setFolderAccess(services, folder._id, change, meta));
          await progress.update({ current: total, force: true });
        },
      );
      return currentView(services, folder._id, principal.viewer, (doc) => ({ access: doc.access }));
    },
  }),
];
