import type { StreamDeps, UploadDeps } from './writeDeps';
import type { RequestMeta } from './requestMeta';
import type { AnyDecidedStream, CommandAttempt } from './streamHandle';
import { StreamNotFoundError, type RecordedEvent } from '../ports/eventStore';
import { checkFits, quotaChargeStream, quotaDecider, quotaStream, type QuotaPolicy } from '../domain/quota';
import { quotaInForce, quotaPolicyOf, type QuotaRoot } from '../queries/quotaQueries';
import { assetstoresNow } from '../queries/assetstoreViews';
import { currentAssetstore, findAssetstore } from '../domain/assetstore';
import { ValidationError } from '../domain/errors';
import { ownValue } from '../domain/ownMap';

/** An upload's admission also chooses its assetstore. */
type UploadAssetstoreDeps = StreamDeps & Pick<UploadDeps, 'assetstores'>;

/** The charge stream's last event (read from its end: one event, however many uploads came before). */
async function lastCharge(deps: StreamDeps, rootId: string): Promise<RecordedEvent | undefined> {
  try {
    for await (const event of deps.eventStore.readStream(quotaChargeStream(rootId), {
      direction: 'backwards',
      maxCount: 1,
    }))
      return event;
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return undefined;
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
  const stores = await assetstoresNow(deps);
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
  const quota = await quotaInForce(deps, root);
  if (quota === null) return null;
  const last = await lastCharge(deps, root.id);
  if (last) await deps.projector.waitFor(last.position);
  checkFits(quota, await usedBy(deps, root), charge.size, charge.previous, true);
  // The append expects the revision of the charge read above: a charge landing since makes it run again.
  const charged = attempt.at(quotaChargeStream(root.id), quotaDecider, last?.revision ?? 'no_stream', {
    policy: {},
  });
  charged.decide({
    type: 'ChargeQuota',
    data: { rootId: root.id, fileId: charge.fileId, bytes: charge.size - charge.previous },
  });
  return charged;
}
