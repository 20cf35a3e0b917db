import type { Resource } from '../routeTable';
import { route } from '../routeTable';
import { Scope } from '../../domain/scopes';
import { param } from '../params';
import { RestError } from '../../domain/errors';
import { checkExactNumbers } from '../../domain/exactNumbers';
import { changeSettings } from '../../commands/settingsCommands';
import { publicSettings, settingNow, settingsByKey } from '../../queries/settingQueries';
import { OWN_PLUGIN_SCRIPTS, OWN_PLUGIN_STYLES } from '../web/webClient';
import { servedPlugins } from '../servedPlugins';
import { requestOrigin } from '../requestOrigin';
import { collectionCreationPolicyAccess } from '../../queries/collectionCreationPolicy';

/**
 * Girder's setSetting: a string value that parses as JSON is stored parsed (`"false"` → false, `"{…}"` → object),
 * unless it holds a number JSON.parse would round (a 400 naming `value`).
 */
function jsonOrString(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return value;
  }
  checkExactNumbers('value', value);
  return parsed;
}

/** A `list` of `{key, value}` objects (PUT) or of keys (GET), with the messages of a bad list. */
function settingChanges(list: unknown[]): { key: string; value: unknown }[] {
  return list.map((entry) => {
    if (
      entry === null ||
      typeof entry !== 'object' ||
      Array.isArray(entry) ||
      typeof (entry as { key?: unknown }).key !== 'string' ||
      !('value' in entry)
    ) {
      throw new RestError('Each entry of list must be an object with "key" and "value".');
    }
    const { key, value } = entry as { key: string; value: unknown };
    return { key, value: jsonOrString(value) };
  });
}

export const systemResource: Resource = {
  name: 'system',
  description: 'Server information and system settings.',
  routes: [
    route({
      method: 'GET',
      path: 'version',
      summary: 'Get the version information for this server.',
      access: 'public',
      params: [],
      // `release` is the Girder release whose API this service speaks: girder_client compares it (as a list of
      // strings) with ['2', '3'] to decide whether a file may be uploaded in one request. The service's own version
      // is `serviceVersion`.
      handler: ({ services }) => ({
        release: GIRDER_COMPATIBLE_RELEASE,
        apiVersion: 'v1',
        serverStartDate: STARTED_AT,
        serviceVersion: services.version,
      }),
    }),
    route({
      method: 'GET',
      path: 'plugin_static_files',
      summary: 'Get the list of plugin static files to be injected into the web client.',
      access: 'public',
      params: [],
      // The web client loads these before it starts: this service's own browser files (docs/web-client.md).
      handler: () => ({ css: OWN_PLUGIN_STYLES, js: OWN_PLUGIN_SCRIPTS }),
    }),
    route({
      method: 'GET',
      path: 'access_flag',
      summary: 'List all access flags available in the system.',
      access: 'public',
      params: [],
      // Access flags are registered by plugins; this service registers none.
      handler: () => ({}),
    }),
    route({
      method: 'GET',
      path: 'plugins',
      summary: 'Get the lists of all available and all loaded plugins.',
      access: 'admin',
      scope: [Scope.PLUGINS_READ],
      params: [],
      // Girder 3's answer (`all`: name → {name, description, url, version}; `loaded`: names): the plugins whose
      // behaviour this service has built in (src/http/servedPlugins.ts), all of them loaded.
      handler: ({ services }) => servedPlugins(services.version),
    }),
    route({
      method: 'GET',
      path: 'public_settings',
      summary: 'Get publicly accessible settings.',
      access: 'public',
      params: [],
      handler: ({ services }) => publicSettings(services),
    }),
    route({
      method: 'GET',
      path: 'setting',
      summary: 'Get the value of a system setting, or a list of them.',
      access: 'admin',
      scope: [Scope.SETTINGS_READ],
      params: [
        param.string('key', { description: 'The key identifying this setting.' }),
        param.json('list', {
          shape: 'array',
          description: 'A JSON list of keys representing a set of settings to return.',
        }),
      ],
      async handler({ params, services, req }) {
        const context = { origin: requestOrigin(req) };
        const list = params.list as unknown[] | undefined;
        if (list !== undefined) return settingsByKey(services, list.map(String), context);
        if (params.key === undefined) throw new RestError("Parameter 'key' is required.");
        return settingNow(services, params.key, context);
      },
    }),
    route({
      method: 'GET',
      path: 'setting/collection_creation_policy/access',
      summary: 'Get the access control list for the collection creation policy.',
      access: 'admin',
      params: [],
      handler: async ({ services }) => collectionCreationPolicyAccess(services),
    }),
    route({
      method: 'PUT',
      path: 'setting',
      summary: 'Set the value for a system setting, or a list of them.',
      access: 'admin',
      params: [
        param.string('key', { description: 'The key identifying this setting.' }),
        // Values are secret: one of them is the SMTP password (`core.smtp.password`), so no value reaches the log.
        param.string('value', {
          secret: true,
          description: 'The value for this setting (JSON is parsed; null unsets it).',
        }),
        param.json('list', {
          shape: 'array',
          secret: true,
          description: 'A JSON list of objects with key and value representing a list of settings to set.',
        }),
      ],
      async handler({ params, services, meta }) {
        const list = params.list as unknown[] | undefined;
        const changes =
          list !== undefined
            ? settingChanges(list)
            : [{ key: params.key ?? '', value: jsonOrString(params.value ?? null) }];
        await changeSettings(services, changes, meta);
        return true;
      },
    }),
    route({
      method: 'DELETE',
      path: 'setting',
      summary: 'Unset the value for a system setting (back to its default).',
      access: 'admin',
      params: [param.requiredString('key', { description: 'The key identifying the setting to unset.' })],
      async handler({ params, services, meta }) {
        await changeSettings(services, [{ key: params.key, value: null }], meta);
        return null;
      },
    }),
  ],
};

const STARTED_AT = new Date().toISOString();
/** The Girder release whose behaviour this service reproduces. */
const GIRDER_COMPATIBLE_RELEASE = '3.2.9';
