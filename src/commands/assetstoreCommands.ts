import type { Services } from '../services';
import type { RequestMeta } from './requestMeta';
import {
  ASSETSTORES_STREAM,
  checkSettings,
  findAssetstore,
  type AssetstoreRecord,
  type AssetstoreSettings,
  type AssetstoreState,
} from '../domain/assetstore';
import { decideOn } from '../domain/decider';
import { blobRefsOf } from '../domain/assetstoreBlobRef';
import { RestError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import type { AssetstoreCommand } from '../domain/assetstore';

/**
 * The assetstores, folded from their stream. Like settings they are a handful of small events, read from the log
 * itself (always current, in every process) rather than kept in a read model.
 */
export async function loadAssetstores(services: Pick<Services, 'commands' | 'assetstores'>): Promise<AssetstoreState> {
  return (await services.commands.load(ASSETSTORES_STREAM, services.assetstores)).state;
}

/** An assetstore by id: Girder's modelParam message when there is none. */
export async function loadAssetstore(services: Services, assetstoreId: string): Promise<AssetstoreRecord> {
  const store = findAssetstore(await loadAssetstores(services), assetstoreId);
  if (!store) throw new RestError(`Invalid assetstore id (${assetstoreId}).`);
  return store;
}

/** Whether any file's bytes are in the store (no page is counted: one row is enough). */
async function assetstoreHasFiles(services: Services, assetstoreId: string): Promise<boolean> {
  return services.readModel.files.anyInAssetstore(blobRefsOf(assetstoreId));
}

async function runOnStream(services: Services, command: AssetstoreCommand, meta: RequestMeta): Promise<void> {
  await services.commands.handle(ASSETSTORES_STREAM, services.assetstores, meta, (assetstores) => {
    assetstores.decide(command);
  });
}

/** `POST /assetstore`: the store is checked (I/O included) before it is recorded. */
export async function createAssetstore(
  services: Services,
  input: { name: string; settings: AssetstoreSettings },
  meta: RequestMeta,
): Promise<AssetstoreRecord> {
  const assetstoreId = newId();
  const command: AssetstoreCommand = {
    type: 'CreateAssetstore',
    data: { assetstoreId, name: input.name, created: girderTime(), settings: checkSettings(input.settings) },
  };
  await decideThenRecord(services, command, meta);
  return loadAssetstore(services, assetstoreId);
}

/** `PUT /assetstore/:id`. */
export async function updateAssetstore(
  services: Services,
  input: { assetstoreId: string; name: string; settings: AssetstoreSettings; current: boolean },
  meta: RequestMeta,
): Promise<AssetstoreRecord> {
  const command: AssetstoreCommand = {
    type: 'UpdateAssetstore',
    data: { ...input, settings: checkSettings(input.settings) },
  };
  await decideThenRecord(services, command, meta);
  return loadAssetstore(services, input.assetstoreId);
}

/**
 * The pure rules first (a name clash needs no disk, database or bucket), then the I/O checks on the settings as they
 * will be stored, then the append (deciding again on the stream as it is then).
 */
async function decideThenRecord(
  services: Services,
  command: Extract<AssetstoreCommand, { type: 'CreateAssetstore' | 'UpdateAssetstore' }>,
  meta: RequestMeta,
): Promise<void> {
  decideOn(services.assetstores, await loadAssetstores(services), command);
  await services.blobs.probe(command.data.settings);
  await runOnStream(services, command, meta);
}

/** `DELETE /assetstore/:id`: refused while any file's bytes are in it. */
export async function deleteAssetstore(services: Services, assetstoreId: string, meta: RequestMeta): Promise<void> {
  const hasFiles = await assetstoreHasFiles(services, assetstoreId);
  await runOnStream(services, { type: 'DeleteAssetstore', data: { assetstoreId, hasFiles } }, meta);
}
