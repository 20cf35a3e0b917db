import path from 'node:path';
import { z } from 'zod';
import type { Decider, DomainEvent } from './decider';
import { unknownEvent } from './decider';
import { RestError, ValidationError } from './errors';
import { DEFAULT_ASSETSTORE_ID } from './assetstoreBlobRef';

/**
 * Assetstores (Girder's Assetstore model): where file bytes live. They are configuration made through the API, so
 * they are events on one stream, which owns the rules that span every store (unique names, exactly one current store,
 * no two stores in one place). Every deployment starts with the default store (DEFAULT_ASSETSTORE_ID, described by
 * the configuration: `BLOB_STORE`, `DATA_DIR`, `MONGODB_URL`) as its current store; events change it like any other.
 *
 * What needs I/O (the root directory can be made and written, the database or bucket answers) is checked by the
 * command before it decides (src/commands/assetstoreCommands.ts); the rules here are pure, with Girder's messages.
 */
export const ASSETSTORES_STREAM = 'assetstores-system';

/** Girder's AssetstoreType. */
export const AssetstoreType = { FILESYSTEM: 0, GRIDFS: 1, S3: 2 } as const;

/** Girder's DEFAULT_PERMS for a filesystem store's files: rw for the user only. */
export const DEFAULT_PERMS = 0o600;
/** Girder's DEFAULT_REGION of an S3 store. */
export const DEFAULT_S3_REGION = 'us-east-1';

const FilesystemSettingsSchema = z.object({
  type: z.literal(AssetstoreType.FILESYSTEM),
  root: z.string(),
  perms: z.number().int(),
});
const GridFsSettingsSchema = z.object({
  type: z.literal(AssetstoreType.GRIDFS),
  db: z.string(),
  /** A MongoDB connection string; null: the service's own MONGODB_URL. */
  mongohost: z.string().nullable(),
  replicaset: z.string().nullable(),
});
const S3SettingsSchema = z.object({
  type: z.literal(AssetstoreType.S3),
  bucket: z.string(),
  /** Keys start with it (no leading or trailing `/`). */
  prefix: z.string(),
  accessKeyId: z.string().nullable(),
  secret: z.string().nullable(),
  /** `[http[s]://]host[:port]` of an S3-compatible server (MinIO, Ceph…); empty: AWS. */
  service: z.string(),
  readOnly: z.boolean(),
  region: z.string(),
  inferCredentials: z.boolean(),
  serverSideEncryption: z.boolean(),
  allowS3AcceleratedTransfer: z.boolean(),
  /**
   * Whether clients talk to the bucket themselves, as Girder's S3 stores always do: downloads of a file redirect to
   * a presigned URL and the web client uploads straight into the bucket. Off: every byte passes through the service
   * (a bucket that browsers cannot reach). Absent (stores made before it existed): on.
   */
  redirect: z.boolean().optional(),
});
const AssetstoreSettingsSchema = z.discriminatedUnion('type', [
  FilesystemSettingsSchema,
  GridFsSettingsSchema,
  S3SettingsSchema,
]);
export type AssetstoreSettings = z.infer<typeof AssetstoreSettingsSchema>;
export type FilesystemSettings = z.infer<typeof FilesystemSettingsSchema>;
export type GridFsSettings = z.infer<typeof GridFsSettingsSchema>;
export type S3Settings = z.infer<typeof S3SettingsSchema>;

export interface AssetstoreRecord {
  assetstoreId: string;
  name: string;
  created: string;
  settings: AssetstoreSettings;
}

export interface AssetstoreState {
  /** In creation order. */
  stores: AssetstoreRecord[];
  currentId: string | null;
}

const AssetstoreCreatedSchema = z.object({
  assetstoreId: z.string(),
  name: z.string(),
  created: z.string(),
  settings: AssetstoreSettingsSchema,
});
const AssetstoreChangedSchema = z.object({
  assetstoreId: z.string(),
  name: z.string(),
  settings: AssetstoreSettingsSchema,
});
const AssetstoreIdSchema = z.object({ assetstoreId: z.string() });

export type AssetstoreEvent =
  | DomainEvent<'AssetstoreCreated', z.infer<typeof AssetstoreCreatedSchema>>
  | DomainEvent<'AssetstoreChanged', z.infer<typeof AssetstoreChangedSchema>>
  | DomainEvent<'AssetstoreMadeCurrent', z.infer<typeof AssetstoreIdSchema>>
  | DomainEvent<'AssetstoreDeleted', z.infer<typeof AssetstoreIdSchema>>;

export type AssetstoreCommand =
  | {
      type: 'CreateAssetstore';
      data: { assetstoreId: string; name: string; created: string; settings: AssetstoreSettings };
    }
  | {
      type: 'UpdateAssetstore';
      data: { assetstoreId: string; name: string; settings: AssetstoreSettings; current: boolean };
    }
  /** `hasFiles`: whether any file's bytes are in it (the read model's answer, taken before deciding). */
  | { type: 'DeleteAssetstore'; data: { assetstoreId: string; hasFiles: boolean } };

export function findAssetstore(state: AssetstoreState, assetstoreId: string): AssetstoreRecord | undefined {
  return state.stores.find((s) => s.assetstoreId === assetstoreId);
}

/** The store new uploads go to; Girder's getCurrent message when there is none. */
export function currentAssetstore(state: AssetstoreState): AssetstoreRecord {
  const current = state.currentId === null ? undefined : findAssetstore(state, state.currentId);
  // Unreachable while one store is always current (the decider keeps it so); Girder's message if it ever is not.
  if (!current) throw new RestError('No current assetstore is set.');
  return current;
}

/** Where a store keeps its bytes, as text: two stores in one place would each delete what the other references. */
function locationOf(settings: AssetstoreSettings): string {
  switch (settings.type) {
    case AssetstoreType.FILESYSTEM:
      return `fs:${path.resolve(settings.root)}`;
    case AssetstoreType.GRIDFS:
      return `gridfs:${settings.mongohost ?? ''}:${settings.db}`;
    case AssetstoreType.S3:
      return `s3:${settings.service}:${settings.bucket}:${settings.prefix}`;
  }
}

/** Girder's validateInfo rules that need no I/O, with its messages; returns the settings as stored (normalised). */
export function checkSettings(settings: AssetstoreSettings): AssetstoreSettings {
  switch (settings.type) {
    case AssetstoreType.FILESYSTEM:
      if (!path.isAbsolute(settings.root))
        throw new ValidationError('You must provide an absolute path for the root directory.', 'root');
      if ((settings.perms & 0o400) === 0 || (settings.perms & 0o200) === 0)
        throw new ValidationError('File permissions must allow "rw" for user.');
      return settings;
    case AssetstoreType.GRIDFS:
      if (!settings.db) throw new ValidationError('Database name must not be empty.', 'db');
      if (settings.db.includes('.') || settings.db.includes(' '))
        throw new ValidationError('Database name cannot contain spaces or periods.', 'db');
      return settings;
    case AssetstoreType.S3: {
      const prefix = settings.prefix.replace(/^\/+|\/+$/g, '');
      if (!settings.bucket) throw new ValidationError('Bucket must not be empty.', 'bucket');
      if (settings.service !== '' && !/^((https?):\/\/)?([^:/]+)(:([0-9]+))?$/.test(settings.service))
        throw new ValidationError('The service must of the form [http[s]://](host domain)[:(port)].', 'service');
      return { ...settings, prefix };
    }
  }
}

/** The name and place rules over every other store. */
function checkAgainstOthers(state: AssetstoreState, assetstoreId: string, name: string, settings: AssetstoreSettings) {
  if (!name) throw new ValidationError('Name must not be empty.', 'name');
  const others = state.stores.filter((s) => s.assetstoreId !== assetstoreId);
  if (others.some((s) => s.name === name))
    throw new ValidationError('An assetstore with that name already exists.', 'name');
  const location = locationOf(settings);
  const sharing = others.find((s) => locationOf(s.settings) === location);
  if (sharing) throw new ValidationError(`The assetstore "${sharing.name}" already keeps its files there.`);
}

function existing(state: AssetstoreState, assetstoreId: string): AssetstoreRecord {
  const store = findAssetstore(state, assetstoreId);
  if (!store) throw new RestError(`Invalid assetstore id (${assetstoreId}).`);
  return store;
}

function evolve(state: AssetstoreState, event: AssetstoreEvent): AssetstoreState {
  switch (event.type) {
    case 'AssetstoreCreated': {
      const { assetstoreId, name, created, settings } = event.data;
      return { ...state, stores: [...state.stores, { assetstoreId, name, created, settings }] };
    }
    case 'AssetstoreChanged': {
      const { assetstoreId, name, settings } = event.data;
      return {
        ...state,
        stores: state.stores.map((s) => (s.assetstoreId === assetstoreId ? { ...s, name, settings } : s)),
      };
    }
    case 'AssetstoreMadeCurrent':
      return { ...state, currentId: event.data.assetstoreId };
    case 'AssetstoreDeleted': {
      const stores = state.stores.filter((s) => s.assetstoreId !== event.data.assetstoreId);
      // Girder: when the current store goes, the most recently created one left becomes current.
      const latest = stores.reduce<AssetstoreRecord | null>(
        (best, s) => (best === null || s.created >= best.created ? s : best),
        null,
      );
      const currentId = state.currentId === event.data.assetstoreId ? (latest?.assetstoreId ?? null) : state.currentId;
      return { stores, currentId };
    }
    default:
      return unknownEvent(event, state);
  }
}

function decide(command: AssetstoreCommand, state: AssetstoreState): AssetstoreEvent[] {
  switch (command.type) {
    case 'CreateAssetstore': {
      const { assetstoreId, name, created } = command.data;
      const settings = checkSettings(command.data.settings);
      checkAgainstOthers(state, assetstoreId, name, settings);
      const events: AssetstoreEvent[] = [
        { type: 'AssetstoreCreated', data: { assetstoreId, name, created, settings } },
      ];
      // Girder: the first store (when none is current) becomes the current one.
      if (state.currentId === null) events.push({ type: 'AssetstoreMadeCurrent', data: { assetstoreId } });
      return events;
    }
    case 'UpdateAssetstore': {
      const { assetstoreId, name, current } = command.data;
      const store = existing(state, assetstoreId);
      if (command.data.settings.type !== store.settings.type)
        throw new ValidationError('The type of an assetstore cannot change.', 'type');
      const settings = checkSettings(command.data.settings);
      checkAgainstOthers(state, assetstoreId, name, settings);
      // Decision (reference-behaviour.md): Girder lets `current=false` on the current store leave none current, and
      // then fails every upload with a 500; here one store is always current, so another is made current instead.
      if (!current && state.currentId === assetstoreId)
        throw new ValidationError('One assetstore must be current: make another one current instead.', 'current');
      const events: AssetstoreEvent[] = [];
      if (name !== store.name || JSON.stringify(settings) !== JSON.stringify(store.settings))
        events.push({ type: 'AssetstoreChanged', data: { assetstoreId, name, settings } });
      if (current && state.currentId !== assetstoreId)
        events.push({ type: 'AssetstoreMadeCurrent', data: { assetstoreId } });
      return events;
    }
    case 'DeleteAssetstore': {
      const { assetstoreId } = command.data;
      existing(state, assetstoreId);
      // Decision: Girder may delete its last store and then fails every upload; here the last one stays.
      if (state.stores.length === 1) throw new ValidationError('You may not delete the last assetstore.');
      if (command.data.hasFiles) throw new ValidationError('You may not delete an assetstore that contains files.');
      return [{ type: 'AssetstoreDeleted', data: { assetstoreId } }];
    }
  }
}

/**
 * The assetstores' decider. Its initial state holds the default store as the configuration describes it (so a
 * deployment that moves DATA_DIR takes its default store along), until events about it say otherwise.
 */
export function assetstoreDecider(
  defaultSettings: AssetstoreSettings,
): Decider<AssetstoreState, AssetstoreCommand, AssetstoreEvent> {
  return {
    initialState: () => ({
      stores: [
        {
          assetstoreId: DEFAULT_ASSETSTORE_ID,
          name: 'Default',
          created: DEFAULT_ASSETSTORE_CREATED,
          settings: defaultSettings,
        },
      ],
      currentId: DEFAULT_ASSETSTORE_ID,
    }),
    evolve,
    decide,
    eventSchemas: {
      AssetstoreCreated: AssetstoreCreatedSchema,
      AssetstoreChanged: AssetstoreChangedSchema,
      AssetstoreMadeCurrent: AssetstoreIdSchema,
      AssetstoreDeleted: AssetstoreIdSchema,
    },
  };
}

/** The default store exists from the start of the deployment; it records no creation time, so it shows the epoch. */
const DEFAULT_ASSETSTORE_CREATED = '1970-01-01T00:00:00.000000+00:00';
