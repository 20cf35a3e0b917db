import type { KurrentDBClient } from '@kurrent/kurrentdb-client';

/** The part of the client the adapter uses (a fake of it drives the unit tests). */
export type KurrentClient = Pick<
  KurrentDBClient,
  'appendToStream' | 'multiStreamAppend' | 'readStream' | 'readAll' | 'subscribeToAll' | 'dispose'
>;

/**
 * Whether a gRPC call was made through the client (reads go through its native bridge instead), i.e. whether a gRPC
 * channel exists that `dispose()` must close. Shared by the store's parts, each marking its calls.
 */
export interface ChannelUse {
  used: boolean;
}
