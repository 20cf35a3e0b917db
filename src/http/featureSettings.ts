import type { Services } from '../services';
import { RestError } from '../domain/errors';
import { SettingKey, settingValue } from '../domain/settings';
import { currentSettings } from '../commands/settingsCommands';

/**
 * Features an administrator can switch off in the settings, refused with Girder's messages while off:
 * `core.api_keys` (creating keys and exchanging them for tokens) and `core.enable_notification_stream`.
 */
async function featureOn(services: Pick<Services, 'commands'>, key: string): Promise<boolean> {
  return settingValue(await currentSettings(services.commands), key) === true;
}

export async function requireApiKeys(services: Pick<Services, 'commands'>): Promise<void> {
  if (!(await featureOn(services, SettingKey.API_KEYS)))
    throw new RestError('API key functionality is disabled on this instance.');
}

export async function requireNotificationStream(services: Pick<Services, 'commands'>): Promise<void> {
  if (!(await featureOn(services, SettingKey.ENABLE_NOTIFICATION_STREAM)))
    throw new RestError('The notification stream is not enabled.', 503);
}
