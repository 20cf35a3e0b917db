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
