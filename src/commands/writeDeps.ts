import type { Logger } from 'pino';
import type { Config } from '../config';
import type { EventStore } from '../ports/eventStore';
import type { ReadModelQueries } from '../ports/readModel';
import type { AssetstoreDecider, BlobStores, PartialUploadStore } from '../ports/blobStore';
import type { Mailer } from '../ports/mailer';
import type { Projector } from '../projections/projector';
import type { CommandRunner } from './commandRunner';
import type { LogDeps } from '../queries/readDeps';

/**
 * What command functions are given, instead of the composition root's whole `Services`: each function declares the
 * parts it uses, from the types below, so a signature says what a write touches. (`Services` has all of these, so a
 * route passes its `services` as is.)
 */

/** Writes through the stream handle that decide only on their streams (a read of the log besides adds `LogDeps`). */
export interface HandleDeps {
  commands: CommandRunner;
}

/**
 * Writes whose decisions also read the read models: sibling names, subtrees, the state of a folder or item created by
 * a copy. They wait for the projector to reach the log's head before reading.
 */
export interface StreamDeps extends HandleDeps {
  readModel: ReadModelQueries;
  projector: Projector;
  eventStore: EventStore;
}

/** Writes that store, hold or reclaim bytes (files, copies, deletes): the blob stores and the retention window. */
export interface BlobDeps extends StreamDeps {
  blobs: BlobStores;
  config: Pick<Config, 'blobRetentionDays'>;
  logger: Logger;
}

/** The upload lifecycle: bytes, chunks in progress, and the assetstores an upload may go to. */
export interface UploadDeps extends BlobDeps {
  partialUploads: PartialUploadStore;
  assetstores: AssetstoreDecider;
}

/** Assetstore writes: their stream, their probes, and whether files are in a store. */
export interface AssetstoreDeps extends HandleDeps, LogDeps {
  assetstores: AssetstoreDecider;
  blobs: BlobStores;
  readModel: ReadModelQueries;
  /** Where a deleted store's partial uploads that could not be aborted are told of. */
  logger: Logger;
}

/** Account mails: the link's token, the recipients (administrators), the SMTP settings and the mailer. */
export interface MailDeps extends HandleDeps, LogDeps {
  readModel: ReadModelQueries;
  logger: Logger;
  mailer: Mailer;
}
