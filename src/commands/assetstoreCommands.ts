import type { RequestMeta } from './requestMeta';
import {
  ASSETSTORES_STREAM,
  checkSettings,
  type AssetstoreRecord,
  type AssetstoreSettings,
} from '../domain/assetstore';
import { assetstoreById, assetstoresNow } from '../queries/assetstoreViews';
import { decideOn } from '../domain/decider';
import { blobRefsOf } from '../domain/assetstoreBlobRef';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import type { AssetstoreCommand } from '../domain/assetstore';
import type { AssetstoreDeps } from './writeDeps';
import { takesMultipartUploads } from '../ports/blobStore';
import { heldUploadsOf, trackedElsewhere } from '../queries/untrackedUploads';

/** Whether any file's bytes are in the store (no page is counted: one row is enough). */
async function assetstoreHasFiles(deps: AssetstoreDeps, assetstoreId: string): Promise<boolean> {
  return deps.readModel.files.anyInAssetstore(blobRefsOf(assetstoreId));
}

async function runOnStream(deps: AssetstoreDeps, command: AssetstoreCommand, meta: RequestMeta): Promise<void> {
  await deps.commands.handle(ASSETSTORES_STREAM, deps.assetstores, meta, (assetstores) => {
    assetstores.decide(command);
  });
}

/** `POST /assetstore`: the store is checked (I/O included) before it is recorded. */
export async function createAssetstore(
  deps: AssetstoreDeps,
  input: { name: string; settings: AssetstoreSettings },
  meta: RequestMeta,
): Promise<AssetstoreRecord> {
  const assetstoreId = newId();
  const command: AssetstoreCommand = {
    type: 'CreateAssetstore',
    data: { assetstoreId, name: input.name, created: girderTime(), settings: checkSettings(input.settings) },
  };
  await decideThenRecord(deps, command, meta);
  return assetstoreById(deps, assetstoreId);
}

/** `PUT /assetstore/:id`. */
export async function updateAssetstore(
  deps: AssetstoreDeps,
  input: { assetstoreId: string; name: string; settings: AssetstoreSettings; current: boolean },
  meta: RequestMeta,
): Promise<AssetstoreRecord> {
  const command: AssetstoreCommand = {
    type: 'UpdateAssetstore',
    data: { ...input, settings: checkSettings(input.settings) },
  };
  await decideThenRecord(deps, command, meta);
  return assetstoreById(deps, input.assetstoreId);
}

/**
 * The pure rules first (a name clash needs no disk, database or bucket), then the I/O checks on the settings as they
 * will be stored, then the append (deciding again on the stream as it is then).
 */
async function decideThenRecord(
  deps: AssetstoreDeps,
  command: Extract<AssetstoreCommand, { type: 'CreateAssetstore' | 'UpdateAssetstore' }>,
  meta: RequestMeta,
): Promise<void> {
  decideOn(deps.assetstores, await assetstoresNow(deps), command);
  await deps.blobs.probe(command.data.settings);
  await runOnStream(deps, command, meta);
}

/**
 * The partial uploads that go with a store being deleted (Girder's Assetstore.remove drops them): once the store is
 * gone nothing lists them again, and a bucket bills for them forever. Listed while the store is known, those an upload
 * into another store records left out; resolves the step that aborts them, or null (none, or the store cannot be
 * reached: Girder skips the step then too).
 */
async function uploadsGoingWith(deps: AssetstoreDeps, assetstoreId: string): Promise<(() => Promise<void>) | null> {
  const listed = await heldUploadsOf(deps, assetstoreId);
  if ('failure' in listed) {
    deps.logger.warn(
      { assetstoreId, reason: listed.failure },
      'Could not list the partial uploads of an assetstore being deleted; they stay in it',
    );
    return null;
  }
  const held = listed.uploads;
  if (!held.length) return null;
  // Taken now: once the deletion is recorded, `blobs` opens the store no more.
  const adapter = await deps.blobs.adapterOf(assetstoreId);
  if (!takesMultipartUploads(adapter)) return null;
  const kept = await trackedElsewhere(deps, assetstoreId);
  const going = held.filter((upload) => !kept(upload));
  // After the deletion is recorded: a failure here is logged, not answered (the store is gone; the request succeeded).
  return async () => {
    for (const upload of going)
      await adapter.abortUpload(upload).catch((error: unknown) => {
        deps.logger.warn(
          { assetstoreId, key: upload.key, uploadId: upload.uploadId, err: error },
          'Could not abort a partial upload of a deleted assetstore',
        );
      });
  };
}

/** `DELETE /assetstore/:id`: refused while any file's bytes are in it; its partial uploads go once it is gone. */
export async function deleteAssetstore(deps: AssetstoreDeps, assetstoreId: string, meta: RequestMeta): Promise<void> {
  const hasFiles = await assetstoreHasFiles(deps, assetstoreId);
  const dropUploads = hasFiles ? null : await uploadsGoingWith(deps, assetstoreId);
  await runOnStream(deps, { type: 'DeleteAssetstore', data: { assetstoreId, hasFiles } }, meta);
  await dropUploads?.();
}
