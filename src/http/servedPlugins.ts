/**
 * The Girder plugins whose behaviour this service has built in, as `GET /system/plugins` lists them (Girder's
 * `all`: name → {name, description, url, version}, and `loaded`). Only user_quota: its routes
 * (src/http/resources/quota.ts), settings and upload checks, and its web part (src/http/web/browser/user-quota-*.js).
 * The web client's plugin list shows each with a link to the configuration page the plugin's script registered for
 * that name. The version is this service's (the plugin is part of it); Girder's display name and description.
 */
interface PluginInfo {
  name: string;
  description: string;
  url: string;
  version: string;
}

export function servedPlugins(serviceVersion: string): { all: Record<string, PluginInfo>; loaded: string[] } {
  return {
    all: {
      user_quota: {
        name: 'User and Collection Quotas',
        description:
          'Limits total file size stored for individual users and collections and can direct all files to a ' +
          'specific assetstore',
        url: '',
        version: serviceVersion,
      },
    },
    loaded: ['user_quota'],
  };
}
