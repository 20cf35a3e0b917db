import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import type { BlobStore } from '../../ports/blobStore';
import type { RouteDef } from '../routeTable';
import { RESPONSE_SENT, route } from '../routeTable';
import { param } from '../params';
import { downloadHeaders, setDownloadHeaders } from '../downloadHeaders';
import { model } from '../modelParams';
import { entrySize, needsZip64, summarizeLayout, zipLayout, type ZipEntry } from '../../queries/zipLayout';
import { Scope } from '../../domain/scopes';
import { AccessLevel } from '../../domain/access';

/** Why writeZip stopped when the reader of the archive went away. */
class ReaderGoneError extends Error {
  constructor() {
    super('The client closed the connection.');
    this.name = 'ReaderGoneError';
  }
}

/**
 * How far ahead of the entry being written the next ones are handed to the zip writer: at most this many entries, and
 * (past the first) at most this many bytes of them. Looking an entry up in the read model and opening its blob then
 * overlap with writing the entries before it: one at a time, the archive waited for each lookup and open, most of the
 * time of a zip of many small files. Large files gain nothing from it and go one at a time as before. A queued blob is
 * opened but not read until its turn, so memory stays a few buffers whatever the archive's size.
 */
const AHEAD_ENTRIES = 16;
/** Entries of an archive kept from the walk that sizes it, to be written without a second walk (see sendZipArchive). */
const KEPT_ENTRIES = 5000;
const AHEAD_BYTES = 4 * 1024 * 1024;

/**
 * Streams `entries` into a zip archive on `out` (STORE, data descriptors, zip64 records when `forceZip64`, timestamps
 * in server local time) and resolves with true once `out` has taken the whole archive. Small entries are queued a
 * little ahead of the one being written ({@link AHEAD_ENTRIES}), and backpressure from `out` pauses the blob being
 * read, so
 * memory stays constant whatever the archive's size. When `out` closes early (the client went away), the blobs opened
 * are destroyed, nothing more is read and the promise resolves with false. Any other failure (a missing blob, a read
 * error) detaches the archive from `out` without ending it and rejects: the caller destroys `out`, so that a truncated
 * archive never looks complete.
 */
export async function writeZip(
  entries: AsyncIterable<ZipEntry>,
  blobs: BlobStore,
  out: Writable,
  options: { forceZip64: boolean },
): Promise<boolean> {
  // Loaded with the first download, not at start-up: archiver and its dependencies were a fifth of the cold start.
  const archiver = require('archiver') as typeof import('archiver');
  const archive = archiver('zip', { store: true, forceZip64: options.forceZip64, forceLocalTime: true });
  const stop = new AbortController();
  // Set from event handlers as well as from the loop (an object, so that the checks below are not narrowed away).
  // `open`: the entries handed to the archive and not written yet, oldest first, with their blob streams.
  const state: { failure: Error | null; open: { source: Readable | null; size: number }[]; openBytes: number } = {
    failure: null,
    open: [],
    openBytes: 0,
  };
  // Read through a call in the loop, so that a check after an await is not narrowed away by the one before it.
  const failed = (): boolean => state.failure !== null;
  const mustWait = (size: number) =>
    state.open.length > 0 && (state.open.length >= AHEAD_ENTRIES || state.openBytes + size > AHEAD_BYTES);
  const fail = (error: Error) => {
    if (state.failure) return;
    state.failure = error;
    archive.unpipe(out);
    // Destroyed with the error, so that the zip writer ends the entry and the archive shuts down.
    for (const { source } of state.open) source?.destroy(error);
    archive.abort();
    stop.abort(error);
  };
  if (out.destroyed) return false;
  archive.on('error', fail);
  // Warnings concern filesystem sources (a vanished path), which this archive never has: treat them as failures.
  archive.on('warning', fail);
  // Entries are written in the order they were appended: each 'entry' is the oldest queued one.
  archive.on('entry', () => {
    state.openBytes -= state.open.shift()?.size ?? 0;
  });
  out.once('close', () => {
    if (!out.writableFinished) fail(new ReaderGoneError());
  });
  archive.pipe(out);

  try {
    for await (const entry of entries) {
      const { entryPath } = entry;
      const size = entrySize(entry);
      if (state.failure) break;
      while (mustWait(size) && !failed()) await once(archive, 'entry', { signal: stop.signal });
      if (failed()) break;
      // A metadata document is its own bytes; a file of no bytes needs no blob.
      const source: Readable | Buffer = entry.file
        ? entry.file.size === 0
          ? Buffer.alloc(0)
          : await blobs.get(entry.file.blobId)
        : entry.data;
      if (!Buffer.isBuffer(source)) {
        if (failed()) {
          source.destroy();
          break;
        }
        // The zip writer listens for errors only once it starts reading the source, which may be several entries
        // later: a source failing while queued fails the archive (and one destroyed by a failure raises nothing).
        source.on('error', fail);
        // Its first bytes are read now, while the entries before it are written (up to the stream's buffer, nothing
        // consumed): a small file's bytes are then waiting when its turn comes, instead of the archive waiting for
        // its reads one entry after the other, most of the time of a zip of many small files.
        source.read(0);
      }
      state.open.push({ source: Buffer.isBuffer(source) ? null : source, size });
      state.openBytes += size;
      archive.append(source, { name: entryPath });
    }
    if (!state.failure) {
      const flushed = once(out, 'finish', { signal: stop.signal });
      archive.finalize().catch(fail);
      await flushed;
    }
  } catch (error) {
    // An abort rejects the wait with an AbortError: the reason is `failure`. Anything else is a failure of its own.
    if (!state.failure) fail(error as Error);
  }
  if (state.failure instanceof ReaderGoneError) return false;
  if (state.failure) throw state.failure;
  return true;
}

/**
 * Answers with the archive of `layout` named `filename` (Content-Disposition attachment): one walk without reading any
 * file first decides whether zip64 records are needed (they must be chosen up front), then the archive streams. A
 * failure before anything was written goes out as a JSON error, not as an attachment.
 */
export async function sendZipArchive(
  services: Services,
  req: Request,
  res: Response,
  filename: string,
  layout: () => AsyncIterable<ZipEntry>,
): Promise<typeof RESPONSE_SENT> {
  // The walk that decides zip64 keeps the entries it finds, up to KEPT_ENTRIES, so that the archive of a folder of
  // that many entries walks the read model once (the walk was half the CPU of a zip of small files); a larger one
  // walks again as it streams, so that memory stays flat.
  const kept: ZipEntry[] = [];
  const summary = await summarizeLayout(
    (async function* () {
      for await (const entry of layout()) {
        if (kept.length <= KEPT_ENTRIES) kept.push(entry);
        yield entry;
      }
    })(),
  );
  const forceZip64 = needsZip64(summary);
  const entries =
    kept.length <= KEPT_ENTRIES
      ? (async function* () {
          yield* kept;
        })()
      : layout();
  res.status(200);
  setDownloadHeaders(res, downloadHeaders({ filename, mimeType: 'application/zip' }));
  if (req.method === 'HEAD') {
    res.end();
    return RESPONSE_SENT;
  }
  try {
    await writeZip(entries, services.blobs, res, { forceZip64 });
  } catch (error) {
    if (!res.headersSent) res.removeHeader('Content-Disposition');
    throw error;
  }
  return RESPONSE_SENT;
}

/** `GET /folder/:id/download`: the folder's files (as the caller may read them) as a streamed zip archive. */
export const folderDownloadRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: ':id/download',
    summary: 'Download an entire folder as a zip archive.',
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    produces: 'application/zip',
    params: [param.json('mimeFilter', { shape: 'array', description: 'JSON list of MIME types to include.' })],
    models: { folder: model.path('folder', AccessLevel.READ) },
    handler: ({ params, models: { folder }, services, principal, req, res }) => {
      const mimeFilter = params.mimeFilter as unknown[] | undefined;
      return sendZipArchive(services, req, res, `${folder.name}.zip`, () =>
        zipLayout(services, folder, principal.viewer, mimeFilter ? { mimeFilter } : {}),
      );
    },
  }),
];
