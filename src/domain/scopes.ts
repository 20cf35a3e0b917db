/** Token scopes (Girder's TokenScope): what a token or API key lets its holder do. */
export const Scope = {
  ANONYMOUS_SESSION: 'core.anonymous_session',
  USER_AUTH: 'core.user_auth',
  TEMP_USER: 'core.user_auth.temporary',
  EMAIL_VERIFICATION: 'core.email_verification',
  PLUGINS_READ: 'core.plugins.read',
  SETTINGS_READ: 'core.setting.read',
  ASSETSTORES_READ: 'core.assetstore.read',
  PARTIAL_UPLOAD_READ: 'core.partial_upload.read',
  PARTIAL_UPLOAD_CLEAN: 'core.partial_upload.clean',
  DATA_READ: 'core.data.read',
  DATA_WRITE: 'core.data.write',
  DATA_OWN: 'core.data.own',
  USER_INFO_READ: 'core.user_info.read',
} as const;
export type ScopeName = (typeof Scope)[keyof typeof Scope];

/** A scope a user may grant an API key, as the key dialog lists it. */
export interface ScopeDescription {
  id: ScopeName;
  name: string;
  description: string;
}

/**
 * Girder's `TokenScope.listScopes()` (its `describeScope` calls, same order and words): `custom` for every user,
 * `adminCustom` only meaningful on an administrator's keys.
 */
export const SCOPE_DESCRIPTIONS: { custom: ScopeDescription[]; adminCustom: ScopeDescription[] } = {
  custom: [
    {
      id: Scope.USER_INFO_READ,
      name: 'Read your user information',
      description: 'Allows clients to look up your user information, including private fields such as email address.',
    },
    { id: Scope.DATA_READ, name: 'Read data', description: 'Allows clients to read all data that you have access to.' },
    {
      id: Scope.DATA_WRITE,
      name: 'Write data',
      description: 'Allows clients to edit data in the hierarchy and create new data anywhere you have write access.',
    },
    {
      id: Scope.DATA_OWN,
      name: 'Data ownership',
      description: 'Allows administrative control on data you own, including setting access control and deletion.',
    },
  ],
  adminCustom: [
    {
      id: Scope.PLUGINS_READ,
      name: 'See installed plugins',
      description: 'Allows clients to see the list of plugins installed on the server.',
    },
    {
      id: Scope.SETTINGS_READ,
      name: 'See system setting values',
      description: 'Allows clients to view the value of any system setting.',
    },
    {
      id: Scope.ASSETSTORES_READ,
      name: 'View assetstores',
      description: 'Allows clients to see all assetstore information.',
    },
    {
      id: Scope.PARTIAL_UPLOAD_READ,
      name: 'View unfinished uploads.',
      description: 'Allows clients to see all partial uploads.',
    },
    {
      id: Scope.PARTIAL_UPLOAD_CLEAN,
      name: 'Remove unfinished uploads.',
      description: 'Allows clients to remove unfinished uploads.',
    },
  ],
};
