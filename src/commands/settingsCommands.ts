import type { RequestMeta } from './requestMeta';
import type { HandleDeps } from './writeDeps';
import type { ReadModelDeps } from '../queries/readDeps';
import type { ReadModelQueries } from '../ports/readModel';
import { ValidationError } from '../domain/errors';
import { SETTINGS_STREAM, SettingKey, settingsDecider, type SettingsEvent } from '../domain/settings';

/** Sets (or, with a null value, unsets) system settings, all or none, on the settings stream. */
export async function changeSettings(
  deps: HandleDeps & ReadModelDeps<'users' | 'groups'>,
  changes: { key: string; value: unknown }[],
  meta: RequestMeta,
): Promise<void> {
  await deps.commands.handle(SETTINGS_STREAM, settingsDecider, meta, async (settings) => {
    await checkReferences(deps.readModel, settings.decide({ type: 'ChangeSettings', data: { changes } }));
  });
}

/**
 * The users and groups a collection creation policy names must exist (Girder loads each with `exc=True`): the
 * settings decider checks their form, the read model their existence.
 */
async function checkReferences(
  readModel: Pick<ReadModelQueries, 'users' | 'groups'>,
  events: SettingsEvent[],
): Promise<void> {
  for (const event of events) {
    if (event.type !== 'SettingChanged' || event.data.key !== SettingKey.COLLECTION_CREATE_POLICY) continue;
    const policy = event.data.value as { groups: string[]; users: string[] };
    for (const id of policy.groups)
      if (!(await readModel.groups.get(id))) throw new ValidationError(`No such group: ${id}`, 'value');
    for (const id of policy.users)
      if (!(await readModel.users.get(id))) throw new ValidationError(`No such user: ${id}`, 'value');
  }
}
