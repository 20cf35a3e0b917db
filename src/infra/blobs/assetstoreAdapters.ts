import fs from 'node:fs';
import type { BlobStore } from '../../ports/blobStore';
import {
  AssetstoreType,
  type AssetstoreSettings,
  type FilesystemSettings,
  type GridFsSettings,
} from '../../domain/assetstore';
import { ValidationError } from '../../domain/errors';
import { FsBlobStore } from './fs/fsBlobStore';

type Adapter = BlobStore & { dispose?(): Promise<void> };

/** What the adapters take from the service's configuration. */
export interface AdapterOptions {
  /** BLOB_SWEEP_GRACE_SECONDS, in ms. */
  blobSweepGraceMs: number;
  /** MONGODB_URL: where a GridFS store without `mongohost` lives. */
  mongodbUrl?: string;
}

/** How long a GridFS store's database may take to answer when it is made or opened (Girder: 10 s). */
const SERVER_SELECTION_TIMEOUT_MS = 10_000;

/** The MongoDB a GridFS store lives in: its own `mongohost`, else the service's MONGODB_URL. */
function mongoUrlOf(settings: GridFsSettings, config: AdapterOptions): string {
  const url = settings.mongohost ?? config.mongodbUrl;
  if (!url)
    throw new ValidationError('A GridFS assetstore needs mongohost (this service has no MONGODB_URL).', 'mongohost');
  return url;
}

async function openGridFs(settings: GridFsSettings, config: AdapterOptions): Promise<Adapter> {
  // Loaded on demand: a deployment without GridFS never loads the driver's GridFS code.
  const { GridFsBlobStore } = require('./gridfs/gridfsBlobStore') as typeof import('./gridfs/gridfsBlobStore');
  return GridFsBlobStore.connect(
    mongoUrlOf(settings, config),
    settings.db,
    { sweepGraceMs: config.blobSweepGraceMs },
    {
      serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
      ...(settings.replicaset ? { replicaSet: settings.replicaset } : {}),
    },
  );
}

/** Opens the adapter of an assetstore's settings (AssetstoreBlobs' OpenAdapter). */
export function assetstoreAdapters(config: AdapterOptions): (settings: AssetstoreSettings) => Promise<Adapter> {
  return async (settings) => {
    switch (settings.type) {
      case AssetstoreType.FILESYSTEM:
        return new FsBlobStore(settings.root, { sweepGraceMs: config.blobSweepGraceMs });
      case AssetstoreType.GRIDFS:
        return openGridFs(settings, config);
      case AssetstoreType.S3: {
        const { S3BlobStore } = require('./s3/s3BlobStore') as typeof import('./s3/s3BlobStore');
        return S3BlobStore.open(settings, { sweepGraceMs: config.blobSweepGraceMs });
      }
    }
  };
}

/** Girder's filesystem validateInfo I/O: the root can be made and written, with its messages. */
async function probeFilesystem(settings: FilesystemSettings): Promise<void> {
  try {
    await fs.promises.mkdir(settings.root, { recursive: true });
  } catch {
    throw new ValidationError(`Could not make directory "${settings.root}".`);
  }
  try {
    await fs.promises.access(settings.root, fs.constants.W_OK);
  } catch {
    throw new ValidationError(`Unable to write into directory "${settings.root}".`);
  }
}

/**
 * The checks of an assetstore's settings that need I/O, made before it is created or changed (Girder's validateInfo):
 * a ValidationError with Girder's message when the store cannot be used.
 */
export async function probeAssetstore(settings: AssetstoreSettings, config: AdapterOptions): Promise<void> {
  switch (settings.type) {
    case AssetstoreType.FILESYSTEM:
      return probeFilesystem(settings);
    case AssetstoreType.GRIDFS: {
      let store: Adapter;
      try {
        store = await openGridFs(settings, config);
      } catch (error) {
        if (error instanceof ValidationError) throw error;
        throw new ValidationError(`Could not connect to the database: ${(error as Error).message}`);
      }
      await store.dispose?.();
      return;
    }
    case AssetstoreType.S3: {
      // Loaded on demand: a deployment without S3 never loads the AWS SDK.
      const { probeS3 } = require('./s3/s3Client') as typeof import('./s3/s3Client');
      return probeS3(settings);
    }
  }
}
