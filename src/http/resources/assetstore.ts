import os from 'node:os';
import type { Resource } from '../routeTable';
import { route } from '../routeTable';
import { pagingOf, pagingParams, param, SAFE_INTEGER } from '../params';
import { RestError, ValidationError } from '../../domain/errors';
import { ownValue } from '../../domain/ownMap';
import { PARENT_TYPES } from '../../domain/parents';
import { AccessLevel } from '../../domain/access';
import { Scope } from '../../domain/scopes';
import { importData } from '../../commands/importCommands';
import { importS3Data } from '../../commands/importS3Commands';
import { importsObjects } from '../../ports/blobStore';
import { model } from '../modelParams';
import { withProgress } from '../../bus/progress';
import { signedInUser } from '../principal';
import {
  AssetstoreType,
  DEFAULT_PERMS,
  DEFAULT_S3_REGION,
  findAssetstore,
  type AssetstoreRecord,
  type AssetstoreSettings,
} from '../../domain/assetstore';
import { createAssetstore, deleteAssetstore, updateAssetstore } from '../../commands/assetstoreCommands';
import {
  assetstoreById,
  assetstoreFiles,
  assetstoresNow,
  assetstoreView,
  assetstoreWithComputedInfo,
} from '../../queries/assetstoreViews';
import { ASSETSTORE_FILE_SORT, ASSETSTORE_SORT } from '../../queries/sortableFields';

type Scalar = string | number | boolean | null | undefined;

/** The order of a listing sorted in memory (a handful of stores, scalar fields): absent first, then by value. */
function compareValues(a: Scalar, b: Scalar): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return -1;
  if (b === undefined || b === null) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A file name pattern as Python's `re.match` applies it (anchored at the start); a 400 naming it when invalid. */
function regexParam<N extends string>(name: N, source: string | undefined): Partial<Record<N, RegExp>> {
  if (!source) return {};
  try {
    return { [name]: new RegExp(`^(?:${source})`) } as Partial<Record<N, RegExp>>;
  } catch {
    throw new RestError(`Invalid regular expression for ${name}.`);
  }
}

/** The settings parameters of POST and PUT (Girder's, for the store types this service has). */
const settingsParams = () =>
  [
    param.string('root', { description: 'Root path on disk (for filesystem type).' }),
    param.string('perms', { description: 'File creation permissions (for filesystem type).' }),
    param.string('db', { description: 'Database name (for GridFS type)' }),
    param.string('mongohost', { description: 'Mongo host URI (for GridFS type)' }),
    param.string('replicaset', { description: 'Replica set name (for GridFS type)' }),
    param.string('bucket', { description: 'The S3 bucket to store data in (for S3 type).' }),
    param.string('prefix', {
      description: 'Optional path prefix within the bucket under which files will be stored (for S3 type).',
    }),
    param.string('accessKeyId', { description: 'The AWS access key ID to use for authentication (for S3 type).' }),
    param.string('secret', {
      secret: true,
      description: 'The AWS secret key to use for authentication (for S3 type).',
    }),
    param.string('service', {
      description:
        'The S3 service host (for S3 type). Default is s3.amazonaws.com. This can be used to specify a protocol and ' +
        'port as well using the form [http[s]://](host domain)[:(port)]. Do not include the bucket name here.',
    }),
    param.bool('readOnly', { description: 'If this assetstore is read-only, set this to true.' }),
    param.string('region', { description: 'The AWS region to which the S3 bucket belongs.' }),
    param.bool('inferCredentials', {
      description:
        'The credentials for connecting to S3 will be inferred rather than explicitly passed. Inferring ' +
        'credentials will ignore accessKeyId and secret.',
    }),
    param.bool('serverSideEncryption', {
      description: 'Whether to use S3 SSE to encrypt the objects uploaded to this bucket (for S3 type).',
    }),
    param.bool('allowS3AcceleratedTransfer', {
      description: 'Whether to allow clients to requests a data transfer using S3 transfer acceleration.',
    }),
    param.bool('redirect', {
      description:
        'Whether clients talk to the bucket themselves (for S3 type; default true, as Girder): file downloads ' +
        'redirect to a presigned URL and the web client uploads straight into the bucket. False: every byte ' +
        'passes through this service (a bucket that browsers cannot reach).',
    }),
  ] as const;

interface SettingsInput {
  root?: string;
  perms?: string;
  db?: string;
  mongohost?: string;
  replicaset?: string;
  bucket?: string;
  prefix?: string;
  accessKeyId?: string;
  secret?: string;
  service?: string;
  readOnly?: boolean;
  region?: string;
  inferCredentials?: boolean;
  serverSideEncryption?: boolean;
  allowS3AcceleratedTransfer?: boolean;
  redirect?: boolean;
}

const required = (name: string, value: string | undefined): string => {
  if (value === undefined) throw new RestError(`Parameter '${name}' is required.`);
  return value;
};

/** Girder's `os.path.expanduser` of a root: `~` and `~/…` are under the home directory of the service's user. */
const expandHome = (root: string) => (root === '~' || root.startsWith('~/') ? os.homedir() + root.slice(1) : root);

/** Girder's perms: an octal integer given as text; empty keeps the previous (or the default) permissions. */
function permsOf(text: string | undefined, previous: number): number {
  if (!text) return previous;
  if (!/^\s*[+-]?(0o)?[0-7]+\s*$/i.test(text)) throw new ValidationError('File permissions must be an octal integer.');
  return parseInt(text.trim().replace(/^([+-]?)0o/i, '$1'), 8);
}

/**
 * The settings a request gives a store of `type` (Girder's createAssetstore/updateAssetstore): each type's required
 * parameter, and for an update the previous value of an optional one that is not given.
 */
function settingsOf(type: number, input: SettingsInput, previous?: AssetstoreSettings): AssetstoreSettings {
  switch (type) {
    case AssetstoreType.FILESYSTEM: {
      const before = previous?.type === AssetstoreType.FILESYSTEM ? previous.perms : DEFAULT_PERMS;
      return { type, root: expandHome(required('root', input.root)), perms: permsOf(input.perms, before) };
    }
    case AssetstoreType.GRIDFS: {
      const before = previous?.type === AssetstoreType.GRIDFS ? previous : undefined;
      return {
        type,
        db: required('db', input.db),
        mongohost: input.mongohost ?? before?.mongohost ?? null,
        replicaset: input.replicaset ?? before?.replicaset ?? null,
      };
    }
    case AssetstoreType.S3: {
      const before = previous?.type === AssetstoreType.S3 ? previous : undefined;
      return {
        type,
        bucket: required('bucket', input.bucket),
        prefix: input.prefix ?? '',
        accessKeyId: input.accessKeyId ?? before?.accessKeyId ?? null,
        // Decision: an update that does not send the secret keeps it (Girder's would clear it).
        secret: input.secret ?? before?.secret ?? null,
        service: input.service ?? '',
        readOnly: input.readOnly ?? before?.readOnly ?? false,
        region: input.region ?? DEFAULT_S3_REGION,
        inferCredentials: input.inferCredentials ?? false,
        serverSideEncryption: input.serverSideEncryption ?? false,
        allowS3AcceleratedTransfer: input.allowS3AcceleratedTransfer ?? false,
        redirect: input.redirect ?? before?.redirect ?? true,
      };
    }
    default:
      throw new RestError('Invalid type parameter');
  }
}

export const assetstoreResource: Resource = {
  name: 'assetstore',
  description: 'Where file bytes are stored (site administrators only).',
  routes: [
    route({
      method: 'GET',
      path: '',
      summary: 'List assetstores.',
      access: 'admin',
      params: [...pagingParams(ASSETSTORE_SORT)],
      async handler({ params, services }) {
        const state = await assetstoresNow(services);
        const paging = pagingOf(params);
        const views = await Promise.all(state.stores.map((s) => assetstoreWithComputedInfo(services, state, s)));
        const key = (view: Record<string, unknown>) => ownValue(view, paging.sort) as Scalar;
        views.sort((a, b) => paging.sortdir * compareValues(key(a), key(b)));
        return views.slice(paging.offset, paging.limit > 0 ? paging.offset + paging.limit : undefined);
      },
    }),
    route({
      method: 'GET',
      path: ':id',
      summary: 'Get information about an assetstore.',
      access: 'admin',
      params: [],
      async handler({ path, services }) {
        const state = await assetstoresNow(services);
        const store = findAssetstore(state, path.id);
        if (!store) throw new RestError(`Invalid assetstore id (${path.id}).`);
        return assetstoreWithComputedInfo(services, state, store);
      },
    }),
    route({
      method: 'POST',
      path: '',
      summary: 'Create a new assetstore.',
      access: 'admin',
      params: [
        param.requiredString('name', { description: 'Unique name for the assetstore.' }),
        param.int('type', { required: true, range: SAFE_INTEGER, description: 'Type of the assetstore.' }),
        ...settingsParams(),
      ],
      async handler({ params, services, meta }) {
        const store = await createAssetstore(
          services,
          { name: params.name, settings: settingsOf(params.type, params) },
          meta,
        );
        return assetstoreView(await assetstoresNow(services), store);
      },
    }),
    route({
      method: 'POST',
      path: ':id/import',
      summary: 'Import existing data into an assetstore.',
      access: 'admin',
      scope: [Scope.DATA_WRITE],
      params: [
        param.requiredString('importPath', {
          description: 'Root path within the underlying storage system to import.',
        }),
        param.requiredString('destinationId', {
          description: 'ID of a folder, collection, or user under which the data will be imported.',
        }),
        param.enum('destinationType', PARENT_TYPES, {
          required: true,
          description: 'Type of the destination resource.',
        }),
        param.flag('progress', false, { description: 'Whether to record progress on the import.' }),
        param.flag('leafFoldersAsItems', false, {
          description: 'Whether folders containing only files should be imported as items.',
        }),
        param.string('fileIncludeRegex', {
          description: 'If set, only filenames matching this regular expression will be imported.',
        }),
        param.string('fileExcludeRegex', {
          description:
            'If set, only filenames that do not match this regular expression will be imported. If a file matches ' +
            'both the include and exclude regex, it will be excluded.',
        }),
      ],
      models: {
        destination: model.parent(AccessLevel.ADMIN, { typeParam: 'destinationType', idParam: 'destinationId' }),
      },
      async handler({ path, params, models: { destination }, services, principal, meta }) {
        const store = await assetstoreById(services, path.id);
        const user = signedInUser(principal);
        if (store.settings.type === AssetstoreType.GRIDFS)
          throw new ValidationError('Only filesystem and S3 assetstores import data.');
        const input = {
          assetstoreId: store.assetstoreId,
          importPath: params.importPath,
          destination,
          leafFoldersAsItems: params.leafFoldersAsItems,
          ...regexParam('fileIncludeRegex', params.fileIncludeRegex),
          ...regexParam('fileExcludeRegex', params.fileExcludeRegex),
          userId: user._id,
        };
        const adapter = await services.blobs.adapterOf(store.assetstoreId);
        await withProgress(services, { on: params.progress, userId: user._id, title: 'Importing data' }, (progress) =>
          importsObjects(adapter)
            ? importS3Data(services, adapter, input, progress, meta)
            : importData(services, input, progress, meta),
        );
        return null;
      },
    }),
    route({
      method: 'PUT',
      path: ':id',
      summary: 'Update an existing assetstore.',
      access: 'admin',
      params: [
        param.requiredString('name', { strip: true, description: 'Unique name for the assetstore.' }),
        ...settingsParams(),
        param.bool('current', { description: 'Whether this is the current assetstore' }),
      ],
      async handler({ path, params, services, meta }) {
        const existing: AssetstoreRecord = await assetstoreById(services, path.id);
        if (params.current === undefined) throw new RestError("Parameter 'current' is required.");
        const store = await updateAssetstore(
          services,
          {
            assetstoreId: existing.assetstoreId,
            name: params.name,
            settings: settingsOf(existing.settings.type, params, existing.settings),
            current: params.current,
          },
          meta,
        );
        return assetstoreView(await assetstoresNow(services), store);
      },
    }),
    route({
      method: 'DELETE',
      path: ':id',
      summary: 'Delete an assetstore.',
      access: 'admin',
      params: [],
      async handler({ path, services, meta }) {
        const store = await assetstoreById(services, path.id);
        await deleteAssetstore(services, store.assetstoreId, meta);
        return { message: `Deleted assetstore ${store.name}.` };
      },
    }),
    route({
      method: 'GET',
      path: ':id/files',
      summary: 'Get a list of files controlled by an assetstore.',
      access: 'admin',
      params: [...pagingParams(ASSETSTORE_FILE_SORT)],
      async handler({ path, params, services, principal, setTotalCount }) {
        const store = await assetstoreById(services, path.id);
        const page = await assetstoreFiles(services, store, pagingOf(params), principal.viewer);
        setTotalCount(page.total);
        return page.rows;
      },
    }),
  ],
};
