import {
  PUBLIC_SETTING_KEYS,
  SETTINGS_STREAM,
  SettingKey,
  settingValue,
  settingsDecider,
  type SettingContext,
  type SettingsState,
} from '../domain/settings';
import type { EventStore } from '../ports/eventStore';
import type { Config } from '../config';
import { hasOwnKey, ownValue } from '../domain/ownMap';
import type { LogDeps } from './readDeps';
import { streamState } from './streamState';

/**
 * Reads of the system settings. Settings are a handful of small events read by a few routes, so they are folded from
 * their stream in the log (always current, in every process) rather than kept in a read model; a key never set reads
 * as its default (src/domain/settings.ts).
 */

/** Every setting as the settings stream now holds it (what `settingValue` and the login policy read). */
export async function settingsNow(deps: LogDeps): Promise<SettingsState> {
  return (await streamState(deps, SETTINGS_STREAM, settingsDecider)).state;
}

/** One setting's value now, its default when unset (`Invalid setting key` for a key this service does not know). */
export async function settingNow(deps: LogDeps, key: string, context: SettingContext = {}): Promise<unknown> {
  return settingValue(await settingsNow(deps), key, context);
}

/** `GET /system/public_settings`: the settings anyone may read, by key. */
export async function publicSettings(deps: LogDeps): Promise<Record<string, unknown>> {
  const state = await settingsNow(deps);
  return Object.fromEntries(PUBLIC_SETTING_KEYS.map((key) => [key, settingValue(state, key)]));
}

/** `GET /system/setting?list=…`: each listed key with its value now (the first unknown key is refused). */
export async function settingsByKey(
  deps: LogDeps,
  keys: readonly string[],
  context: SettingContext,
): Promise<Record<string, unknown>> {
  const state = await settingsNow(deps);
  return Object.fromEntries(keys.map((key) => [key, settingValue(state, key, context)]));
}

/**
 * Days a new login token (and its cookie) lives: the `core.cookie_lifetime` setting once an administrator set it,
 * else the deployment's TOKEN_LIFETIME_DAYS (180 unless configured, Girder's default).
 */
export async function tokenLifetimeDays(
  deps: LogDeps & { config: Pick<Config, 'tokenLifetimeDays'> },
): Promise<number> {
  const settings = await settingsNow(deps);
  return hasOwnKey(settings, SettingKey.COOKIE_LIFETIME)
    ? (ownValue(settings, SettingKey.COOKIE_LIFETIME) as number)
    : deps.config.tokenLifetimeDays;
}

/** What {@link cachedSettings} reads: the settings stream's revision (one indexed lookup) and, when it moved, its fold. */
export interface CachedSettingsDeps {
  eventStore: Pick<EventStore, 'readStream' | 'readAll' | 'streamRevision'>;
}

/**
 * The settings as {@link settingsNow} reads them, folded again only when the settings stream's revision moved (a
 * setting written or removed, by any process): for a check on every request of a kind (CORS), where folding the stream
 * each time would cost more than the request. The state is frozen: every caller shares it.
 */
export function cachedSettings(deps: CachedSettingsDeps): () => Promise<Readonly<SettingsState>> {
  let cached: { revision: bigint | 'no_stream'; state: Readonly<SettingsState> } | undefined;
  return async () => {
    const revision = await deps.eventStore.streamRevision(SETTINGS_STREAM);
    if (cached?.revision === revision) return cached.state;
    // Folded after the revision was read: a change in between makes the state newer than its revision, and the next
    // call, seeing the new revision, folds again.
    const state = Object.freeze(await settingsNow(deps));
    cached = { revision, state };
    return state;
  };
}
