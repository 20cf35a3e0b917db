import type { Config } from '../config';
import type { HandleDeps } from './writeDeps';
import { hasOwnKey, ownValue } from '../domain/ownMap';
import { SettingKey } from '../domain/settings';
import { currentSettings } from './settingsCommands';

/**
 * Days a new login token (and its cookie) lives: the `core.cookie_lifetime` setting once an administrator set it,
 * else the deployment's TOKEN_LIFETIME_DAYS (180 unless configured, Girder's default).
 */
export async function tokenLifetimeDays(
  deps: HandleDeps & { config: Pick<Config, 'tokenLifetimeDays'> },
): Promise<number> {
  const settings = await currentSettings(deps.commands);
  return hasOwnKey(settings, SettingKey.COOKIE_LIFETIME)
    ? (ownValue(settings, SettingKey.COOKIE_LIFETIME) as number)
    : deps.config.tokenLifetimeDays;
}
