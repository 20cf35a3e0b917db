import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { within } from '../../../ports/within';
import type { KurrentClient } from './client';

/**
 * Opening a connection to KurrentDB for the service's startup: the URL parsed, the server probed within a time
 * limit (its capabilities and one read), and every failure said in one line with the credentials masked.
 */

/** One line, fit for a startup error: the URL was malformed, the server unreachable or too old. */
export class KurrentDbConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KurrentDbConnectError';
  }
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** gRPC method of KurrentDB 25.1's multi-stream append, as the server's capabilities list it. */
const APPEND_SESSION = { path: '/kurrentdb.protocol.v2.streams.StreamsService/AppendSession' };

/** A client for `url`; a malformed URL is a {@link KurrentDbConnectError}. */
export function openClient(url: string): KurrentDBClient {
  try {
    return KurrentDBClient.connectionString(url);
  } catch (error) {
    throw new KurrentDbConnectError(`KURRENTDB_URL "${redactUrl(url)}" is malformed: ${oneLine(error)}`);
  }
}

export interface ProbeOptions {
  timeoutMs: number;
  /** Refuse servers without multi-stream append (KurrentDB < 25.1). */
  requireMultiStreamAppend: boolean;
}

/**
 * Asks the server for its capabilities and runs `read` (a read of the head) within `timeoutMs`; an unreachable or
 * too old server is a {@link KurrentDbConnectError}. The caller disposes of the client when this fails.
 */
export async function probeServer(
  client: KurrentDBClient,
  url: string,
  read: () => Promise<unknown>,
  options: ProbeOptions,
): Promise<void> {
  const where = redactUrl(url);
  let server: ServerInfo;
  try {
    server = await within(
      (async () => {
        const info = await serverInfo(client);
        await read();
        return info;
      })(),
      options.timeoutMs,
      'the server',
    );
  } catch (error) {
    throw new KurrentDbConnectError(`Cannot reach KurrentDB at ${where}: ${oneLine(error)}`);
  }
  if (options.requireMultiStreamAppend && server.multiStreamAppend === false) {
    throw new KurrentDbConnectError(
      `KurrentDB at ${where} (server version ${server.version}) does not support multi-stream appends; ` +
        'the service needs KurrentDB 25.1 or later.',
    );
  }
}

interface ServerInfo {
  version: string;
  /** undefined when the client does not expose the server's capabilities. */
  multiStreamAppend: boolean | undefined;
}

/**
 * The server's version and whether it offers multi-stream append. The client keeps capabilities to itself
 * (`protected`), hence the narrow structural access; fetching them is also the probe's first round trip.
 */
async function serverInfo(client: KurrentDBClient): Promise<ServerInfo> {
  const view = client as unknown as {
    capabilities?: Promise<{ serverVersion: string; supports(method: { path: string }, feature?: string): boolean }>;
  };
  const capabilities = await view.capabilities;
  if (!capabilities) return { version: 'unknown', multiStreamAppend: undefined };
  return { version: capabilities.serverVersion, multiStreamAppend: capabilities.supports(APPEND_SESSION) };
}

/** `dispose()` cancels the client's streams but leaves its gRPC channel open; close it too when there is one. */
export async function closeChannel(client: KurrentClient): Promise<void> {
  const view = client as unknown as { getChannel?: () => Promise<{ close(): void }> };
  if (!(client instanceof KurrentDBClient) || typeof view.getChannel !== 'function') return;
  try {
    (await within(view.getChannel(), 1000, 'the gRPC channel')).close();
  } catch {
    // No channel could be made (unreachable server): nothing to close.
  }
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  return message
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\s*Resolution note:\s*$/, '')
    .trim();
}
