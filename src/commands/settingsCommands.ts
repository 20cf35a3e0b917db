import type { CommandRunner } from './commandRunner';
import { toNewEvents } from './commandRunner';
import type { RequestMeta } from './requestMeta';
import { decideOn } from '../domain/decider';
import { SETTINGS_STREAM, settingsDecider, type SettingsState } from '../domain/settings';

/** Sets (or, with a null value, unsets) system settings, all or none, on the settings stream. */
export async function changeSettings(
  commands: CommandRunner,
  changes: { key: string; value: unknown }[],
  meta: RequestMeta,
): Promise<void> {
  await commands.run(async () => {
    const stream = await commands.load(SETTINGS_STREAM, settingsDecider);
    const { events } = decideOn(settingsDecider, stream.state, { type: 'ChangeSettings', data: { changes } });
    return {
      appends: [{ streamId: SETTINGS_STREAM, expectedState: stream.expected, events: toNewEvents(events, meta) }],
      result: undefined,
    };
  });
}

/**
 * The current settings, folded from their stream. Settings are a handful of small events read by a few routes,
 * so they are read from the log itself (always current, in every process) rather than kept in a read model.
 */
export async function currentSettings(commands: CommandRunner): Promise<SettingsState> {
  return (await commands.load(SETTINGS_STREAM, settingsDecider)).state;
}
