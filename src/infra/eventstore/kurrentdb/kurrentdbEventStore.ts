import type {
  AppendResult,
  EventStore,
  ExpectedState,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamAppend,
  SubscribeAllOptions,
  Subscription,
} from '../../../ports/eventStore';
import type { AppendRetryOptions } from './appendRetry';
import { KurrentAppends } from './appends';
import type { ChannelUse, KurrentClient } from './client';
import { DEFAULT_CONNECT_TIMEOUT_MS, closeChannel, openClient, probeServer } from './connection';
import { KurrentReads } from './reads';
import { KurrentSubscriptions, type BackoffOptions } from './subscriptions';

export type { KurrentClient } from './client';
export { KurrentDbConnectError } from './connection';
export { backoffDelay } from './subscriptions';

export interface KurrentDbEventStoreOptions {
  /**
   * Stream prefixes applied to `$all` reads, subscriptions and `headPosition()` when a call names none (the
   * service's categories in production). Empty: every event except KurrentDB's system events.
   */
  streamPrefixes?: readonly string[];
  /** Resubscription backoff after a dropped subscription (default 250 ms doubling up to 10 s). */
  backoff?: BackoffOptions;
  /** Told about dropped subscriptions (a pino logger fits). */
  logger?: { warn(obj: object, msg: string): void };
  /** Retries of appends with an unknown outcome (deadline, not leader, unavailable): see ./appendRetry.ts. */
  appendRetry?: AppendRetryOptions;
}

export interface ConnectOptions extends KurrentDbEventStoreOptions {
  /** How long the startup probe may take (capabilities and a read of the head). Default 10 s. */
  timeoutMs?: number;
  /** Refuse servers without multi-stream append (KurrentDB < 25.1). Default true: the service's commands need it. */
  requireMultiStreamAppend?: boolean;
}

/**
 * The EventStore port over KurrentDB / EventStoreDB (`@kurrent/kurrentdb-client`), put together from its parts:
 *
 *  - appends (./appends.ts): `appendToStreams` with several streams uses KurrentDB 25.1's atomic multi-stream
 *    append ({@link KurrentDbEventStore.connect} refuses older servers); the 1 MiB limit is checked before anything
 *    is sent; appends with an unknown outcome are retried with the same event ids;
 *  - reads (./reads.ts): `position` is the event's commit position in `$all`; `$all` reads are filtered on the
 *    server (stream prefixes; otherwise system events excluded); reads start only at positions events gave;
 *  - subscriptions (./subscriptions.ts): catch-up, one caught-up marker, then live events, in order, resumed after
 *    a drop with exponential backoff;
 *  - the connection (./connection.ts): the startup probe and the one-line errors.
 */
export class KurrentDbEventStore implements EventStore {
  private readonly channel: ChannelUse = { used: false };
  private readonly reads: KurrentReads;
  private readonly appends: KurrentAppends;
  private readonly subscriptions: KurrentSubscriptions;
  private disposed = false;

  constructor(
    private readonly client: KurrentClient,
    options: KurrentDbEventStoreOptions = {},
  ) {
    this.reads = new KurrentReads(client, options.streamPrefixes);
    this.appends = new KurrentAppends(client, this.reads, this.channel, options.appendRetry);
    this.subscriptions = new KurrentSubscriptions(client, this.reads, this.channel, options.backoff, options.logger);
  }

  /**
   * Opens a client on `url` and probes the server within `timeoutMs`: its capabilities (multi-stream append) and a
   * read of the head. Fails with a one-line {@link KurrentDbConnectError} instead of hanging or dumping a stack.
   */
  static async connect(url: string, options: ConnectOptions = {}): Promise<KurrentDbEventStore> {
    const client = openClient(url);
    const store = new KurrentDbEventStore(client, options);
    store.channel.used = true;
    try {
      await probeServer(client, url, () => store.headPosition(), {
        timeoutMs: options.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        requireMultiStreamAppend: options.requireMultiStreamAppend ?? true,
      });
    } catch (error) {
      await store.dispose();
      throw error;
    }
    return store;
  }

  appendToStream(
    streamId: string,
    events: NewEvent[],
    options: { expectedState: ExpectedState },
  ): Promise<AppendResult> {
    return this.appends.appendToStream(streamId, events, options);
  }

  appendToStreams(appends: StreamAppend[]): Promise<{ position: bigint }> {
    return this.appends.appendToStreams(appends);
  }

  readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent> {
    return this.reads.readStream(streamId, options);
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    return this.reads.readAll(options);
  }

  streamRevision(streamId: string): Promise<bigint | 'no_stream'> {
    return this.reads.streamRevision(streamId);
  }

  headPosition(): Promise<bigint> {
    return this.reads.headPosition();
  }

  async streamRevisionAndHead(streamId: string): Promise<{ revision: bigint | 'no_stream'; head: bigint }> {
    const [revision, head] = await Promise.all([this.streamRevision(streamId), this.headPosition()]);
    return { revision, head };
  }

  subscribeToAll(options?: SubscribeAllOptions): Subscription {
    return this.subscriptions.subscribeToAll(options);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.subscriptions.closeAll();
    await this.client.dispose();
    if (this.channel.used) await closeChannel(this.client);
  }
}
