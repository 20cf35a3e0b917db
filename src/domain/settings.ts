import { z } from 'zod';
import type { Decider, DomainEvent } from './decider';
import { ValidationError } from './errors';
import { OwnMap, hasOwnKey, ownValue } from './ownMap';
import { INVALID_QUOTA, sizeQuota } from './quota';

/**
 * System settings (Girder's Setting model), event-sourced on one stream: every `PUT /system/setting` appends the
 * changes it validated, and the current value of a key is the last change to it, or the key's default.
 */
export const SETTINGS_STREAM = 'settings-system';

export const SettingKey = {
  ADD_TO_GROUP_POLICY: 'core.add_to_group_policy',
  BANNER_COLOR: 'core.banner_color',
  BRAND_NAME: 'core.brand_name',
  CONTACT_EMAIL_ADDRESS: 'core.contact_email_address',
  ENABLE_PASSWORD_LOGIN: 'core.enable_password_login',
  PRIVACY_NOTICE: 'core.privacy_notice',
  REGISTRATION_POLICY: 'core.registration_policy',
  DEFAULT_USER_QUOTA: 'user_quota.default_user_quota',
  DEFAULT_COLLECTION_QUOTA: 'user_quota.default_collection_quota',
} as const;

/** The keys `GET /system/public_settings` returns (Girder's list, in its order). */
export const PUBLIC_SETTING_KEYS = [
  SettingKey.BRAND_NAME,
  SettingKey.CONTACT_EMAIL_ADDRESS,
  SettingKey.PRIVACY_NOTICE,
  SettingKey.BANNER_COLOR,
  SettingKey.REGISTRATION_POLICY,
  SettingKey.ENABLE_PASSWORD_LOGIN,
];

/** A key's default and its validator (Girder's settings.py: same messages), which may normalise the value. */
interface SettingRule {
  default: unknown;
  validate(value: unknown): unknown;
}

const invalid = (message: string) => new ValidationError(message, 'value');
const lowerString = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);

/**
 * The settings this service knows and honours. Girder has more (SMTP, CORS, caching…), for features this service
 * does not have; setting one of those is refused as an unknown key rather than stored and ignored.
 */
/** The user_quota plugin's default quotas: blank (none) or a non-negative integer of bytes (src/domain/quota.ts). */
const defaultQuotaRule: SettingRule = {
  default: null,
  validate(value) {
    const quota = sizeQuota(value);
    if (quota === 'invalid') throw invalid(INVALID_QUOTA);
    return quota;
  },
};

const RULES = new OwnMap<string, SettingRule>({
  [SettingKey.DEFAULT_USER_QUOTA]: defaultQuotaRule,
  [SettingKey.DEFAULT_COLLECTION_QUOTA]: defaultQuotaRule,
  [SettingKey.ADD_TO_GROUP_POLICY]: {
    default: 'never',
    validate(value) {
      const v = lowerString(value);
      if (typeof v !== 'string' || !['never', 'noadmin', 'nomod', 'yesadmin', 'yesmod', ''].includes(v)) {
        throw invalid('Add to group policy must be one of "never", "noadmin", "nomod", "yesadmin", or "yesmod".');
      }
      return v;
    },
  },
  [SettingKey.BANNER_COLOR]: {
    default: '#3F3B3B',
    validate(value) {
      if (!value) throw invalid('The banner color may not be empty');
      if (typeof value !== 'string' || !/^#[0-9A-Fa-f]{6}$/.test(value))
        throw invalid('The banner color must be a hex color triplet');
      return value;
    },
  },
  [SettingKey.BRAND_NAME]: {
    default: 'Folder Service',
    validate(value) {
      if (!value) throw invalid('The brand name may not be empty');
      if (typeof value !== 'string') throw invalid('The brand name must be a string');
      return value;
    },
  },
  [SettingKey.CONTACT_EMAIL_ADDRESS]: {
    default: 'admin@example.com',
    validate(value) {
      if (!value) throw invalid('Contact email address must not be blank.');
      if (typeof value !== 'string') throw invalid('Contact email address must be a string.');
      return value;
    },
  },
  [SettingKey.ENABLE_PASSWORD_LOGIN]: {
    default: true,
    validate(value) {
      if (typeof value !== 'boolean') throw invalid('Enable password login setting must be boolean.');
      return value;
    },
  },
  [SettingKey.PRIVACY_NOTICE]: {
    default: 'https://www.apache.org/licenses/LICENSE-2.0',
    validate(value) {
      if (!value) throw invalid('The privacy notice link may not be empty');
      if (typeof value !== 'string') throw invalid('The privacy notice link must be a string');
      return value;
    },
  },
  [SettingKey.REGISTRATION_POLICY]: {
    default: 'open',
    validate(value) {
      // Girder also has "approve" (accounts wait for an administrator); this service has no approval queue.
      const v = lowerString(value);
      if (v !== 'open' && v !== 'closed') throw invalid('Registration policy must be "open" or "closed".');
      return v;
    },
  },
});

const SettingChangedSchema = z.object({ key: z.string(), value: z.unknown() });
const SettingUnsetSchema = z.object({ key: z.string() });

export type SettingsEvent =
  | DomainEvent<'SettingChanged', z.infer<typeof SettingChangedSchema>>
  | DomainEvent<'SettingUnset', z.infer<typeof SettingUnsetSchema>>;

export type SettingsState = Record<string, unknown>;

/** `PUT /system/setting`: the changes of one request. */
export interface ChangeSettings {
  type: 'ChangeSettings';
  data: { changes: { key: string; value: unknown }[] };
}

export const settingsDecider: Decider<SettingsState, ChangeSettings, SettingsEvent> = {
  initialState: (): SettingsState => ({}),
  evolve(state: SettingsState, event: SettingsEvent): SettingsState {
    switch (event.type) {
      case 'SettingChanged':
        return { ...state, [event.data.key]: event.data.value };
      case 'SettingUnset': {
        const { [event.data.key]: _removed, ...rest } = state;
        return rest;
      }
      default: {
        const never: never = event;
        return never;
      }
    }
  },
  /**
   * `PUT /system/setting`: every change is validated before any is recorded (all or nothing); a null value unsets
   * the key (back to its default). Changing a key to the value it already has records nothing.
   */
  decide(command: ChangeSettings, state: SettingsState): SettingsEvent[] {
    const events: SettingsEvent[] = [];
    let next = state;
    for (const { key, value } of command.data.changes) {
      const rule = settingRule(key);
      const event: SettingsEvent =
        value === null
          ? { type: 'SettingUnset', data: { key } }
          : { type: 'SettingChanged', data: { key, value: rule.validate(value) } };
      if (
        event.type === 'SettingUnset'
          ? !hasOwnKey(next, key)
          : JSON.stringify(ownValue(next, key)) === JSON.stringify(event.data.value)
      )
        continue;
      events.push(event);
      next = settingsDecider.evolve(next, event);
    }
    return events;
  },
  eventSchemas: { SettingChanged: SettingChangedSchema, SettingUnset: SettingUnsetSchema },
};

/** The value of a key: the stored one, else its default. Unknown keys → `Invalid setting key`. */
export function settingValue(state: SettingsState, key: string): unknown {
  const rule = settingRule(key);
  return hasOwnKey(state, key) ? ownValue(state, key) : rule.default;
}

/** The rule of a key this service knows; any other text (`constructor`, `__proto__` included) is refused. */
function settingRule(key: string): SettingRule {
  const rule = RULES.get(key);
  if (!rule) throw new ValidationError(`Invalid setting key "${key}".`, 'key');
  return rule;
}
