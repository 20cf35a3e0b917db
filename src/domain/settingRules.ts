import { ValidationError } from './errors';
import { OwnMap } from './ownMap';
import { isEmailAddress } from './emailAddress';
import { INVALID_QUOTA, sizeQuota } from './quota';

/** Every core setting key of Girder 3.2.15 (girder/settings.py SettingKey), same spelling, and the quota plugin's. */
export const SettingKey = {
  ADD_TO_GROUP_POLICY: 'core.add_to_group_policy',
  API_KEYS: 'core.api_keys',
  BANNER_COLOR: 'core.banner_color',
  BRAND_NAME: 'core.brand_name',
  COLLECTION_CREATE_POLICY: 'core.collection_create_policy',
  CONTACT_EMAIL_ADDRESS: 'core.contact_email_address',
  COOKIE_LIFETIME: 'core.cookie_lifetime',
  CORS_ALLOW_HEADERS: 'core.cors.allow_headers',
  CORS_ALLOW_METHODS: 'core.cors.allow_methods',
  CORS_ALLOW_ORIGIN: 'core.cors.allow_origin',
  CORS_EXPOSE_HEADERS: 'core.cors.expose_headers',
  EMAIL_FROM_ADDRESS: 'core.email_from_address',
  EMAIL_HOST: 'core.email_host',
  EMAIL_VERIFICATION: 'core.email_verification',
  ENABLE_NOTIFICATION_STREAM: 'core.enable_notification_stream',
  ENABLE_PASSWORD_LOGIN: 'core.enable_password_login',
  FILEHANDLE_MAX_SIZE: 'core.filehandle_max_size',
  GIRDER_MOUNT_INFORMATION: 'core.girder_mount_information',
  HTTP_ONLY_COOKIES: 'core.http_only_cookies',
  PRIVACY_NOTICE: 'core.privacy_notice',
  REGISTRATION_POLICY: 'core.registration_policy',
  ROUTE_TABLE: 'core.route_table',
  SERVER_ROOT: 'core.server_root',
  SMTP_ENCRYPTION: 'core.smtp.encryption',
  SMTP_HOST: 'core.smtp_host',
  SMTP_PASSWORD: 'core.smtp.password',
  SMTP_PORT: 'core.smtp.port',
  SMTP_USERNAME: 'core.smtp.username',
  UPLOAD_MINIMUM_CHUNK_SIZE: 'core.upload_minimum_chunk_size',
  USER_DEFAULT_FOLDERS: 'core.user_default_folders',
  DEFAULT_USER_QUOTA: 'user_quota.default_user_quota',
  DEFAULT_COLLECTION_QUOTA: 'user_quota.default_collection_quota',
} as const;

/** What a default may depend on: the request that reads it (Girder's `core.email_host` default is its origin). */
export interface SettingContext {
  /** `<scheme>://<host>[:port]` of the current request, when there is one. */
  origin?: string;
}

/** A key's default and its validator (Girder's settings.py: same messages), which may normalise the value. */
export interface SettingRule {
  default: unknown;
  /** A default computed from the request, for the keys whose Girder default is a function. */
  defaultFrom?: (context: SettingContext) => unknown;
  validate(value: unknown): unknown;
}

const invalid = (message: string) => new ValidationError(message, 'value');
const lowerString = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Girder's route id of its own web client in `core.route_table`. */
const GIRDER_ROUTE_ID = 'core_girder';

/**
 * Python's `int(value)` as Girder's validators call it: an integral number, a float (truncated) or a string of
 * digits with an optional sign and surrounding blanks; anything else (or a number JSON cannot hold exactly) is
 * undefined, which the validators turn into their message.
 */
function pythonInt(value: unknown): number | undefined {
  let n: number | undefined;
  if (typeof value === 'number') n = Math.trunc(value);
  else if (typeof value === 'string' && /^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) n = Number(value.replace(/_/g, ''));
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

/** Python's `float(value)`: a number or a decimal string (blanks, sign, exponent); not infinity or NaN. */
function pythonFloat(value: unknown): number | undefined {
  let n: number | undefined;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) n = Number(value);
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}

/** Girder's CORS validators: blank- or comma-separated words, duplicates dropped, joined with `, `. */
function commaList(value: string, normalise: (word: string) => string): string {
  const words = value.replace(/,/g, ' ').trim().split(/\s+/).filter(Boolean).map(normalise);
  return [...new Set(words)].join(', ');
}

function oneOf(allowed: readonly string[], message: string, lower = true) {
  return (value: unknown) => {
    const v = lower ? lowerString(value) : value;
    if (typeof v !== 'string' || !allowed.includes(v)) throw invalid(message);
    return v;
  };
}

function booleanSetting(message: string) {
  return (value: unknown) => {
    if (typeof value !== 'boolean') throw invalid(message);
    return value;
  };
}

function nonEmptyString(emptyMessage: string, typeMessage = emptyMessage) {
  return (value: unknown) => {
    if (!value) throw invalid(emptyMessage);
    if (typeof value !== 'string') throw invalid(typeMessage);
    return value;
  };
}

function anyString(message: string) {
  return (value: unknown) => {
    if (typeof value !== 'string') throw invalid(message);
    return value;
  };
}

function integerAtLeast(minimum: number, message: string) {
  return (value: unknown) => {
    const n = pythonInt(value);
    if (n === undefined || n < minimum) throw invalid(message);
    return n;
  };
}

/** The ids a collection creation policy lists, each a 24-hex-digit id (existence is the command's to check). */
function policyIds(value: Record<string, unknown>, field: 'groups' | 'users'): string[] {
  const ids = value[field] ?? [];
  const model = field === 'groups' ? 'group' : 'user';
  if (!Array.isArray(ids)) throw invalid(`Collection creation policy "${field}" must be a list of ${model} ids.`);
  return ids.map((id) => {
    if (typeof id !== 'string' || !/^[0-9a-f]{24}$/i.test(id)) throw invalid(`Invalid ${model} id (${String(id)}).`);
    return id.toLowerCase();
  });
}

/** The user_quota plugin's default quotas: blank (none) or a non-negative integer of bytes (src/domain/quota.ts). */
const defaultQuotaRule: SettingRule = {
  default: null,
  validate(value) {
    const quota = sizeQuota(value);
    if (quota === 'invalid') throw invalid(INVALID_QUOTA);
    return quota;
  },
};

/**
 * Girder 3.2.15's core settings with their defaults and validators (girder/settings.py), in its order. Defaults that
 * name Girder (brand, contact, privacy notice, e-mail sender) name this service instead.
 */
export const SETTING_RULES = new OwnMap<string, SettingRule>({
  [SettingKey.DEFAULT_USER_QUOTA]: defaultQuotaRule,
  [SettingKey.DEFAULT_COLLECTION_QUOTA]: defaultQuotaRule,
  [SettingKey.ADD_TO_GROUP_POLICY]: {
    default: 'never',
    validate: oneOf(
      ['never', 'noadmin', 'nomod', 'yesadmin', 'yesmod', ''],
      'Add to group policy must be one of "never", "noadmin", "nomod", "yesadmin", or "yesmod".',
    ),
  },
  [SettingKey.API_KEYS]: { default: true, validate: booleanSetting('API key setting must be boolean.') },
  [SettingKey.BANNER_COLOR]: {
    default: '#3F3B3B',
    validate(value) {
      if (!value) throw invalid('The banner color may not be empty');
      if (typeof value !== 'string' || !/^#[0-9A-Fa-f]{6}$/.test(value))
        throw invalid('The banner color must be a hex color triplet');
      return value;
    },
  },
  [SettingKey.BRAND_NAME]: {
    default: 'Folder Service',
    validate: nonEmptyString('The brand name may not be empty', 'The brand name must be a string'),
  },
  [SettingKey.COLLECTION_CREATE_POLICY]: {
    default: { open: false, groups: [], users: [] },
    validate(value) {
      if (!isRecord(value)) throw invalid('Collection creation policy must be a JSON object.');
      const open = value.open ?? false;
      if (typeof open !== 'boolean') throw invalid('Collection creation policy "open" must be boolean.');
      return { ...value, open, groups: policyIds(value, 'groups'), users: policyIds(value, 'users') };
    },
  },
  [SettingKey.CONTACT_EMAIL_ADDRESS]: {
    default: 'admin@example.com',
    validate(value) {
      // Used in a "mailto:" link, so a bare address: no display name.
      if (typeof value !== 'string' || !isEmailAddress(value))
        throw invalid('Contact email address must be a valid email address.');
      return value;
    },
  },
  [SettingKey.COOKIE_LIFETIME]: {
    default: 180,
    validate(value) {
      const days = pythonFloat(value);
      if (days === undefined || days <= 0) throw invalid('Cookie lifetime must be a number > 0.0.');
      return days;
    },
  },
  [SettingKey.CORS_ALLOW_HEADERS]: {
    default:
      'Accept-Encoding, Authorization, Content-Disposition, Content-Type, Cookie, Girder-Authorization, Girder-OTP, Girder-Token',
    validate(value) {
      if (typeof value !== 'string')
        throw invalid('Allowed headers must be a comma-separated list or an empty string.');
      return commaList(value, (w) => w);
    },
  },
  [SettingKey.CORS_ALLOW_METHODS]: {
    default: 'GET, POST, PUT, HEAD, DELETE',
    validate(value) {
      if (typeof value !== 'string')
        throw invalid('Allowed methods must be a comma-separated list or an empty string.');
      return commaList(value, (w) => w.toUpperCase());
    },
  },
  [SettingKey.CORS_ALLOW_ORIGIN]: {
    default: '',
    validate(value) {
      if (typeof value !== 'string')
        throw invalid('Allowed origin must be a comma-separated list of base urls or * or an empty string.');
      return commaList(value, (w) => w.replace(/\/+$/, ''));
    },
  },
  [SettingKey.CORS_EXPOSE_HEADERS]: {
    default: 'Girder-Total-Count, Content-Disposition',
    validate: anyString('CORS exposed headers must be a string'),
  },
  [SettingKey.EMAIL_FROM_ADDRESS]: {
    // May carry a display name (RFC 5322), so only blankness is checked.
    default: 'Folder Service <no-reply@example.com>',
    validate: nonEmptyString('Email from address must not be blank.', 'Email from address must be a string.'),
  },
  [SettingKey.EMAIL_HOST]: {
    default: null,
    defaultFrom: (context) => context.origin ?? null,
    validate(value) {
      if (typeof value !== 'string') throw invalid('Email host must be a string.');
      return value.trim();
    },
  },
  [SettingKey.EMAIL_VERIFICATION]: {
    default: 'disabled',
    validate: oneOf(
      ['required', 'optional', 'disabled'],
      'Email verification must be "required", "optional", or "disabled".',
    ),
  },
  [SettingKey.ENABLE_NOTIFICATION_STREAM]: {
    default: true,
    validate: booleanSetting('Enable notification stream option must be boolean.'),
  },
  [SettingKey.ENABLE_PASSWORD_LOGIN]: {
    default: true,
    validate: booleanSetting('Enable password login setting must be boolean.'),
  },
  [SettingKey.FILEHANDLE_MAX_SIZE]: {
    default: 1024 * 1024 * 16,
    validate: integerAtLeast(0, 'Maximum file size for filehandle must be an integer >= 0.'),
  },
  [SettingKey.GIRDER_MOUNT_INFORMATION]: {
    default: null,
    validate(value) {
      if (!isRecord(value) || !Object.hasOwn(value, 'path'))
        throw invalid('Girder mount information must be a dict with the "path" key.');
      return value;
    },
  },
  [SettingKey.HTTP_ONLY_COOKIES]: {
    default: false,
    validate: booleanSetting('HTTP only cookies setting must be boolean.'),
  },
  [SettingKey.PRIVACY_NOTICE]: {
    default: 'https://www.apache.org/licenses/LICENSE-2.0',
    validate: nonEmptyString('The privacy notice link may not be empty', 'The privacy notice link must be a string'),
  },
  [SettingKey.REGISTRATION_POLICY]: {
    default: 'open',
    validate: oneOf(['open', 'closed', 'approve'], 'Registration policy must be "open", "closed", or "approve".'),
  },
  [SettingKey.ROUTE_TABLE]: {
    default: { [GIRDER_ROUTE_ID]: '/' },
    validate(value) {
      if (!isRecord(value) || !Object.hasOwn(value, GIRDER_ROUTE_ID) || !value[GIRDER_ROUTE_ID])
        throw invalid('Girder root must be routable.');
      const routes = Object.values(value).filter(Boolean);
      if (routes.some((r) => typeof r !== 'string' || !r.startsWith('/')))
        throw invalid('Routes must begin with a forward slash.');
      if (new Set(routes).size < routes.length) throw invalid('Routes must be unique.');
      return value;
    },
  },
  [SettingKey.SERVER_ROOT]: {
    default: '',
    validate(value) {
      if (value && (typeof value !== 'string' || !/^https?:\/\//.test(value)))
        throw invalid('Server root must start with http:// or https://.');
      return value;
    },
  },
  [SettingKey.SMTP_ENCRYPTION]: {
    default: 'none',
    validate: oneOf(['none', 'starttls', 'ssl'], 'SMTP encryption must be one of "none", "starttls", or "ssl".', false),
  },
  [SettingKey.SMTP_HOST]: {
    default: 'localhost',
    validate: nonEmptyString('SMTP host must not be blank.', 'SMTP host must be a string.'),
  },
  [SettingKey.SMTP_PASSWORD]: { default: '', validate: anyString('SMTP password must be a string') },
  [SettingKey.SMTP_PORT]: { default: 25, validate: integerAtLeast(1, 'SMTP port must be an integer > 0.') },
  [SettingKey.SMTP_USERNAME]: { default: '', validate: anyString('SMTP username must be a string') },
  [SettingKey.UPLOAD_MINIMUM_CHUNK_SIZE]: {
    default: 1024 * 1024 * 5,
    validate: integerAtLeast(0, 'Upload minimum chunk size must be an integer >= 0.'),
  },
  [SettingKey.USER_DEFAULT_FOLDERS]: {
    default: 'public_private',
    validate: oneOf(
      ['public_private', 'none'],
      'User default folders must be either "public_private" or "none".',
      false,
    ),
  },
});
