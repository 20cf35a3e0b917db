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

/** `DELETE /assetstore/:id`: refused while any file's bytes are in it. */
export async function deleteAssetstore(deps: AssetstoreDeps, assetstoreId: string, meta: RequestMeta): Promise<void> {
  const hasFiles = await assetstoreHasFiles(deps, assetstoreId);
  await runOnStream(deps, { type: 'DeleteAssetstore', data: { assetstoreId, hasFiles } }, meta);
}
