import { z } from 'zod';
import type { Decider, DomainEvent } from './decider';
import { ValidationError } from './errors';
import { hasOwnKey, ownValue } from './ownMap';
import { SETTING_RULES, SettingKey, type SettingContext, type SettingRule } from './settingRules';

/**
 * System settings (Girder's Setting model), event-sourced on one stream: every `PUT /system/setting` appends the
 * changes it validated, and the current value of a key is the last change to it, or the key's default.
 */
export const SETTINGS_STREAM = 'settings-system';

export { SettingKey, type SettingContext } from './settingRules';

/** The keys `GET /system/public_settings` returns (Girder's list, in its order). */
export const PUBLIC_SETTING_KEYS = [
  SettingKey.BRAND_NAME,
  SettingKey.CONTACT_EMAIL_ADDRESS,
  SettingKey.PRIVACY_NOTICE,
  SettingKey.BANNER_COLOR,
  SettingKey.REGISTRATION_POLICY,
  SettingKey.ENABLE_PASSWORD_LOGIN,
];

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

/**
 * The value of a key: the stored one, else its default (computed from the request for `core.email_host`). Unknown
 * keys → `Invalid setting key`.
 */
export function settingValue(state: SettingsState, key: string, context: SettingContext = {}): unknown {
  const rule = settingRule(key);
  if (hasOwnKey(state, key)) return ownValue(state, key);
  return rule.defaultFrom ? rule.defaultFrom(context) : rule.default;
}

/** The rule of a key this service knows; any other text (`constructor`, `__proto__` included) is refused. */
function settingRule(key: string): SettingRule {
  const rule = SETTING_RULES.get(key);
  if (!rule) throw new ValidationError(`Invalid setting key "${key}".`, 'key');
  return rule;
}
