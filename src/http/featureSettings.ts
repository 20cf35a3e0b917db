import type { LogDeps } from '../queries/readDeps';
import { RestError } from '../domain/errors';
import { SettingKey } from '../domain/settings';
import { settingNow } from '../queries/settingQueries';

/**
 * Features an administrator can switch off in the settings, refused with Girder's messages while off:
 * `core.api_keys` (creating keys and exchanging them for tokens) and `core.enable_notification_stream`.
 */
async function featureOn(deps: LogDeps, key: string): Promise<boolean> {
  return (await settingNow(deps, key)) === true;
}

export async function requireApiKeys(deps: LogDeps): Promise<void> {
  if (!(await featureOn(deps, SettingKey.API_KEYS)))
    throw new RestError('API key functionality is disabled on this instance.');
}

export async function requireNotificationStream(deps: LogDeps): Promise<void> {
  if (!(await featureOn(deps, SettingKey.ENABLE_NOTIFICATION_STREAM)))
    throw new RestError('The notification stream is not enabled.', 503);
}
