import type { Logger } from 'pino';
import type { Config } from './config';
import type { LogTail } from './ports/logTail';
import type { ReadModelCheck } from './ports/readModelCheck';
import type { EventStore } from './ports/eventStore';
import type { ProjectorStore, ReadModelQueries, TokenDoc, UserDoc } from './ports/readModel';
import type { HookBus } from './bus/hooks';
import type { Projector } from './projections/projector';
import type { CommandRunner } from './commands/commandRunner';
import type { Notifications } from './bus/notifications';
import type { ProgressService } from './bus/progress';
import type { AssetstoreDecider, BlobStores, PartialUploadStore } from './ports/blobStore';
import type { DomainEvents } from './bus/domainEvents';
import type { StorageFaults } from './bus/storageFaults';
import type { Mailer } from './ports/mailer';

/** Everything a route handler may use; built once by the composition root (src/bootstrap.ts). */
export interface Services {
  config: Config;
  version: string;
  logger: Logger;
  /** The most recent log lines, split as Girder's error and info logs (`GET /system/log`). */
  logTail: LogTail;
  /** The live read models against a replay of the log (`PUT /system/check`). */
  checkReadModels: ReadModelCheck;
  eventStore: EventStore;
  /** The read model's queries role (and its checkpoint, which readiness reports); projector plumbing is not here. */
  readModel: ReadModelQueries & Pick<ProjectorStore, 'checkpoint'>;
  projector: Projector;
  /**
   * Callers' tokens (by presented value) and users, cached while the read model says they are unchanged
   * (src/queries/accountCache.ts).
   */
  accounts: {
    token(presented: string): Promise<TokenDoc | null>;
    caller(presented: string): Promise<{ token: TokenDoc | null; user: UserDoc | null }>;
  };
  commands: CommandRunner;
  hooks: HookBus;
  /** Progress notification records (operational state, not in the event log) and their `changes$`. */
  notifications: Notifications;
  /** `progress.start({ on, userId, title, message })` → ProgressContext; see src/bus/progress.ts (withProgress). */
  progress: ProgressService;
  /**
   * File bytes in every assetstore: content-addressed, reference-counted through the read model; the references name
   * their assetstore (src/ports/blobStore.ts, src/domain/assetstoreBlobRef.ts).
   */
  blobs: BlobStores;
  /** The assetstores' decider, whose initial state is this deployment's default store (src/domain/assetstore.ts). */
  assetstores: AssetstoreDecider;
  /** Bytes of chunked uploads in progress (DATA_DIR/uploads/<uploadId>). */
  partialUploads: PartialUploadStore;
  /** Every event once the read models applied it (catch-up + live SSE streams, src/bus/domainEvents.ts). */
  domainEvents: DomainEvents;
  /** The storage fault writes last failed on (a full disk, a read-only store), until one succeeds; for /readyz. */
  storageFaults: StorageFaults;
  /** Outgoing e-mail (SMTP, configured by the `core.smtp.*` settings at each send). */
  mailer: Mailer;
}
