import { z } from 'zod';
import type { Decider, DomainEvent } from './decider';
import { unknownEvent } from './decider';
import { RestError, ValidationError } from './errors';
import { isObjectId } from './ids';
import { OwnMap, ownValue } from './ownMap';

/**
 * Quotas (Girder's user_quota plugin): a policy per user and per collection, on its own stream `quota-<id>`, and a
 * second stream `quotacharge-<id>` that serialises the uploads a quota limits: every upload finishing under a root
 * with a quota appends `QuotaCharged` to it with the stream's expected revision, after the root's size was read with
 * every earlier charge projected, so two uploads finishing together cannot both fit in the room left for one. The
 * charges have a stream of their own because they only need its last revision (read from its end), while the policy
 * is folded whole: on one stream every finishing upload would read every charge before it. (Logs written before the
 * split hold charges on `quota-<id>`; the fold passes over them.)
 */
export const quotaStream = (rootId: string): string => `quota-${rootId}`;
export const quotaChargeStream = (rootId: string): string => `quotacharge-${rootId}`;

export type QuotaPolicy = Record<string, unknown>;

/** Girder's ValidateSizeQuota: blank (no quota) or a non-negative integer of bytes. */
export const INVALID_QUOTA = 'Invalid quota.  Must be blank or a non-negative integer representing the limit in bytes.';
export function sizeQuota(value: unknown): number | null | 'invalid' {
  if (value === null || value === undefined || value === '') return null;
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)
        ? Number(value)
        : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : 'invalid';
}

const assetstoreKey = (key: string, message: string, allowNone: boolean) => (value: unknown) => {
  if (!value || value === 'current') return null;
  if (allowNone && value === 'none') return value;
  if (typeof value === 'string' && isObjectId(value)) return value;
  throw new RestError(message, 400, key);
};

/** Each policy key's validator (Girder's `_validate_<key>`, same messages), returning the value as stored. */
const POLICY_KEYS = new OwnMap<string, (value: unknown) => unknown>({
  fallbackAssetstore: assetstoreKey(
    'fallbackAssetstore',
    'Invalid fallbackAssetstore.  Must either be an assetstore ID, be blank or "current" to use the current ' +
      'assetstore, or be "none" to disable fallback usage.',
    true,
  ),
  fileSizeQuota: (value) => {
    const quota = sizeQuota(value);
    if (quota === 'invalid') throw new RestError(INVALID_QUOTA, 400, 'fileSizeQuota');
    return quota;
  },
  preferredAssetstore: assetstoreKey(
    'preferredAssetstore',
    'Invalid preferredAssetstore.  Must either be an assetstore ID, or be blank or "current" to use the current ' +
      'assetstore.',
    false,
  ),
  useQuotaDefault: (value) => {
    const text = String(value).toLowerCase();
    if (['none', 'true', 'yes', '1'].includes(text)) return true;
    if (['false', 'no', '0'].includes(text)) return false;
    throw new RestError('Invalid useQuotaDefault.  Must either be true or false.', 400, 'useQuotaDefault');
  },
});

/** Girder's _validatePolicy: keys starting with `_` are dropped, unknown keys refused, each value validated. */
function validatePolicy(policy: Record<string, unknown>): QuotaPolicy {
  const valid: QuotaPolicy = {};
  for (const [key, value] of Object.entries(policy)) {
    if (key.startsWith('_')) continue;
    const validate = POLICY_KEYS.get(key);
    if (!validate)
      throw new RestError(
        `${key} is not a valid quota policy key.  Valid keys are ${[...POLICY_KEYS.keys()].sort().join(', ')}.`,
      );
    Object.defineProperty(valid, key, { value: validate(value), enumerable: true, writable: true, configurable: true });
  }
  return valid;
}

/** The quota in force: the root's own, or with `useQuotaDefault` (the default) the default setting; null: none. */
export function fileSizeQuota(policy: QuotaPolicy, defaultQuota: unknown): number | null {
  // Validated as a boolean when set; absent means true.
  const useDefault = ownValue(policy, 'useQuotaDefault') !== false;
  const quota = useDefault ? defaultQuota : ownValue(policy, 'fileSizeQuota');
  return typeof quota === 'number' && Number.isSafeInteger(quota) && quota >= 0 ? quota : null;
}

/** Girder's formatSize. */
function formatSize(bytes: number): string {
  const suffixes = ['B', 'kB', 'MB', 'GB', 'TB'];
  if (bytes < 20000) return `${Math.trunc(bytes)} ${suffixes[0]}`;
  let index = 0;
  let value = bytes;
  while (value >= 1024 && index + 1 < suffixes.length) {
    value /= 1024;
    index += 1;
  }
  const precision = value < 10 ? 3 : value < 100 ? 2 : 1;
  return `${value.toFixed(precision)} ${suffixes[index]}`;
}

/**
 * Girder's _checkUploadSize: the refusal when an upload of `size` bytes (replacing `previous` bytes) does not fit
 * in a root that uses `used` of `quota` bytes; a replacement by something smaller always fits. `finishing` words it
 * as Girder does at the end of an upload.
 */
export function checkFits(quota: number | null, used: number, size: number, previous: number, finishing: boolean) {
  if (quota === null) return;
  if (used + size - previous <= quota || size < previous) return;
  const left = Math.max(quota - used, 0);
  const what = finishing ? 'Upload exceeded' : 'Upload would exceed';
  throw new ValidationError(
    `${what} file storage quota (need ${formatSize(size - previous)}, only ${formatSize(left)} available - used ` +
      `${formatSize(used)} out of ${formatSize(quota)})`,
    'size',
  );
}

const QuotaPolicySetSchema = z.object({ rootId: z.string(), policy: z.record(z.string(), z.unknown()) });
const QuotaChargedSchema = z.object({ rootId: z.string(), fileId: z.string(), bytes: z.number().int() });

export type QuotaEvent =
  | DomainEvent<'QuotaPolicySet', z.infer<typeof QuotaPolicySetSchema>>
  | DomainEvent<'QuotaCharged', z.infer<typeof QuotaChargedSchema>>;

export type QuotaCommand =
  | { type: 'SetQuotaPolicy'; data: { rootId: string; policy: Record<string, unknown> } }
  | { type: 'ChargeQuota'; data: { rootId: string; fileId: string; bytes: number } };

export interface QuotaState {
  policy: QuotaPolicy;
}

export const quotaDecider: Decider<QuotaState, QuotaCommand, QuotaEvent> = {
  initialState: () => ({ policy: {} }),
  evolve(state, event) {
    switch (event.type) {
      case 'QuotaPolicySet':
        return { policy: { ...state.policy, ...event.data.policy } };
      case 'QuotaCharged':
        return state;
      default:
        return unknownEvent(event, state);
    }
  },
  decide(command) {
    switch (command.type) {
      case 'SetQuotaPolicy':
        return [
          {
            type: 'QuotaPolicySet',
            data: { rootId: command.data.rootId, policy: validatePolicy(command.data.policy) },
          },
        ];
      case 'ChargeQuota':
        return [{ type: 'QuotaCharged', data: command.data }];
    }
  },
  eventSchemas: { QuotaPolicySet: QuotaPolicySetSchema, QuotaCharged: QuotaChargedSchema },
};
