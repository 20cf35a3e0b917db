import type { StreamDeps, UploadDeps } from './writeDeps';
import type { RequestMeta } from './requestMeta';
import type { AnyDecidedStream, CommandAttempt } from './streamHandle';
import { currentSettings } from './settingsCommands';
import { foldEvents } from '../domain/decider';
import {
  checkFits,
  fileSizeQuota,
  quotaDecider,
  quotaStream,
  type QuotaEvent,
  type QuotaPolicy,
} from '../domain/quota';
import { SettingKey, settingValue } from '../domain/settings';
import { currentAssetstore, findAssetstore } from '../domain/assetstore';
import { ValidationError } from '../domain/errors';
import { ownValue } from '../domain/ownMap';
import { loadAssetstores } from './assetstoreCommands';

/** An upload's admission also chooses its assetstore. */
type UploadAssetstoreDeps = StreamDeps & Pick<UploadDeps, 'assetstores'>;

/** The user or collection whose quota an upload counts against (its items' `baseParentType`/`baseParentId`). */
export interface QuotaRoot {
  type: 'user' | 'collection';
  id: string;
}

/** A root's quota stream: its policy, its expected revision and the log position of its last event. */
async function loadQuotaStream(deps: StreamDeps, rootId: string) {
  const events = await deps.commands.readAll(quotaStream(rootId));
  const last = events.at(-1);
  const state = foldEvents(
    quotaDecider,
    events.map((e) => ({ type: e.type, data: e.data }) as QuotaEvent),
  );
  return { state, expected: last ? last.revision : ('no_stream' as const), position: last?.position };
}

export async function quotaPolicyOf(deps: StreamDeps, rootId: string): Promise<QuotaPolicy> {
  return (await loadQuotaStream(deps, rootId)).state.policy;
}

/** `PUT /user|collection/:id/quota`: the given keys change, the others stay. */
export async function setQuotaPolicy(
  deps: StreamDeps,
  rootId: string,
  policy: Record<string, unknown>,
  meta: RequestMeta,
): Promise<void> {
  await deps.commands.handle(quotaStream(rootId), quotaDecider, meta, (quota) => {
    quota.decide({ type: 'SetQuotaPolicy', data: { rootId, policy } });
  });
}

/** The quota in force for a root: its policy, or the default quota setting of its kind; null when none. */
export async function quotaInForce(deps: StreamDeps, root: QuotaRoot, policy?: QuotaPolicy): Promise<number | null> {
  const settings = await currentSettings(deps.commands);
  const key = root.type === 'user' ? SettingKey.DEFAULT_USER_QUOTA : SettingKey.DEFAULT_COLLECTION_QUOTA;
  return fileSizeQuota(policy ?? (await quotaPolicyOf(deps, root.id)), settingValue(settings, key));
}

/** What a root holds now (the read model's size of the user or collection). */
async function usedBy(deps: StreamDeps, root: QuotaRoot): Promise<number> {
  const doc =
    root.type === 'user' ? await deps.readModel.users.get(root.id) : await deps.readModel.collections.get(root.id);
  return doc?.size ?? 0;
}

/**
 * Girder's getUploadAssetstore: the store an upload under `root` goes to: the policy's `preferredAssetstore` when it
 * exists, else its `fallbackAssetstore` (unset: the current store; `none`: no fallback), else the current store when
 * the policy names none.
 */
async function uploadAssetstore(deps: UploadAssetstoreDeps, policy: QuotaPolicy): Promise<string> {
  const stores = await loadAssetstores(deps);
  /** null: the current store; false: not available. */
  const check = (spec: unknown): string | null | false => {
    if (spec === undefined || spec === null) return null;
    if (spec === 'none' || typeof spec !== 'string') return false;
    return findAssetstore(stores, spec) ? spec : false;
  };
  let chosen = check(ownValue(policy, 'preferredAssetstore'));
  if (chosen === false) chosen = check(ownValue(policy, 'fallbackAssetstore'));
  if (chosen === false) throw new ValidationError('Required assetstore is unavailable');
  return chosen ?? currentAssetstore(stores).assetstoreId;
}

/**
 * Admits an upload of `size` bytes (replacing `previous`) under `root` before any byte is taken (Girder's
 * checkUploadStart): it must fit in the quota in force. Resolves with the assetstore it goes to.
 */
export async function admitUpload(
  deps: UploadAssetstoreDeps,
  root: QuotaRoot,
  size: number,
  previous = 0,
): Promise<string> {
  const policy = await quotaPolicyOf(deps, root.id);
  checkFits(await quotaInForce(deps, root, policy), await usedBy(deps, root), size, previous, false);
  return uploadAssetstore(deps, policy);
}

/**
 * The quota's part of an upload's finishing append (Girder's checkUploadFinalize), made inside the command's attempt:
 * with a quota in force, the root's size is read once every earlier charge on its stream is projected, the upload
 * must fit, and `QuotaCharged` goes on the stream with its expected revision: of two uploads finishing at once, one
 * conflicts, runs again, sees the other's bytes and is refused if they no longer fit. Null when no quota applies.
 */
export async function quotaCharge(
  deps: StreamDeps,
  attempt: CommandAttempt,
  root: QuotaRoot,
  charge: { fileId: string; size: number; previous: number },
): Promise<AnyDecidedStream | null> {
  const stream = await loadQuotaStream(deps, root.id);
  const quota = await quotaInForce(deps, root, stream.state.policy);
  if (quota === null) return null;
  if (stream.position !== undefined) await deps.projector.waitFor(stream.position);
  checkFits(quota, await usedBy(deps, root), charge.size, charge.previous, true);
  // Read whole above (for its last position): the append expects the revision that read ended at.
  const charged = attempt.at(quotaStream(root.id), quotaDecider, stream.expected, stream.state);
  charged.decide({
    type: 'ChargeQuota',
    data: { rootId: root.id, fileId: charge.fileId, bytes: charge.size - charge.previous },
  });
  return charged;
}
