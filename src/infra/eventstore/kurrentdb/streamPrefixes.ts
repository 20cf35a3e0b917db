/**
 * The stream categories this service writes (see the `*Stream` helpers in src/domain/). Production `$all` reads and
 * subscriptions are filtered to them on the server, so the projector never pulls KurrentDB's system events or
 * another application's streams. test/unit/kurrentdbMapping.test.ts fails when a domain file names a stream
 * category missing here: add it here in the same change.
 */
export const SERVICE_STREAM_PREFIXES: readonly string[] = [
  'apikey-',
  'collection-',
  'collectionname-',
  'email-',
  'folder-',
  'group-',
  'groupname-',
  'item-',
  'login-',
  'quota-',
  'quotacharge-',
  'settings-',
  'siblingname-',
  'token-',
  'upload-',
  'user-',
];
