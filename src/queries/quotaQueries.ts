import type { LogDeps } from './readDeps';
import { streamState } from './streamState';
import { settingsNow } from './settingQueries';
import { fileSizeQuota, quotaDecider, quotaStream, type QuotaPolicy } from '../domain/quota';
import { SettingKey, settingValue } from '../domain/settings';

/**
 * Reads of quotas. A root's quota policy is a small stream of its own with no read model, folded from the log; the
 * default quotas are settings. The routes show them, and the upload commands read them before they admit or charge.
 */

/** The user or collection whose quota an upload counts against (its items' `baseParentType`/`baseParentId`). */
export interface QuotaRoot {
  type: 'user' | 'collection';
  id: string;
}

/** A root's quota policy now (`{}` when none was ever set). */
export async function quotaPolicyOf(deps: LogDeps, rootId: string): Promise<QuotaPolicy> {
  return (await streamState(deps, quotaStream(rootId), quotaDecider)).state.policy;
}

/** The quota in force for a root: its policy, or the default quota setting of its kind; null when none. */
export async function quotaInForce(deps: LogDeps, root: QuotaRoot, policy?: QuotaPolicy): Promise<number | null> {
  const settings = await settingsNow(deps);
  const key = root.type === 'user' ? SettingKey.DEFAULT_USER_QUOTA : SettingKey.DEFAULT_COLLECTION_QUOTA;
  return fileSizeQuota(policy ?? (await quotaPolicyOf(deps, root.id)), settingValue(settings, key));
}
