import { ApiClient, startApi, type TestUser } from '../support/apiClient';

/** The keys the web client's Server configuration page reads and saves (SystemConfigurationView.js, 3.2.15). */
const CONFIGURATION_PAGE_KEYS = [
  'core.api_keys',
  'core.contact_email_address',
  'core.brand_name',
  'core.banner_color',
  'core.privacy_notice',
  'core.cookie_lifetime',
  'core.enable_password_login',
  'core.email_from_address',
  'core.email_host',
  'core.registration_policy',
  'core.email_verification',
  'core.server_root',
  'core.smtp_host',
  'core.smtp.port',
  'core.smtp.encryption',
  'core.smtp.username',
  'core.smtp.password',
  'core.upload_minimum_chunk_size',
  'core.enable_notification_stream',
  'core.cors.allow_origin',
  'core.cors.allow_methods',
  'core.cors.allow_headers',
  'core.add_to_group_policy',
  'core.collection_create_policy',
  'core.user_default_folders',
  'core.route_table',
];

const refused = (message: string) => ({ message, type: 'validation', field: 'value' });

describe('system settings: every core key of Girder 3.2.15', () => {
  let api: ApiClient;
  let admin: TestUser;
  let user: TestUser;
  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    user = await api.createUser('someone');
  });
  afterAll(() => api.close());

  const put = (key: string, value: unknown) =>
    api
      .as(admin)
      .put('/system/setting')
      .type('form')
      .send({ key, value: typeof value === 'string' ? value : JSON.stringify(value) });
  const get = async (key: string) => (await api.as(admin).get('/system/setting').query({ key })).body as unknown;
  const unset = (key: string) => api.as(admin).delete('/system/setting').query({ key });

  it('answers the configuration page with every key and its default', async () => {
    const res = await api
      .as(admin)
      .get('/system/setting')
      .set('Host', 'files.example.org:8080')
      .query({ list: JSON.stringify(CONFIGURATION_PAGE_KEYS) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      'core.api_keys': true,
      'core.contact_email_address': 'admin@example.com',
      'core.brand_name': 'Folder Service',
      'core.banner_color': '#3F3B3B',
      'core.privacy_notice': 'https://www.apache.org/licenses/LICENSE-2.0',
      'core.cookie_lifetime': 180,
      'core.enable_password_login': true,
      'core.email_from_address': 'Folder Service <no-reply@example.com>',
      'core.email_host': 'http://files.example.org:8080',
      'core.registration_policy': 'open',
      'core.email_verification': 'disabled',
      'core.server_root': '',
      'core.smtp_host': 'localhost',
      'core.smtp.port': 25,
      'core.smtp.encryption': 'none',
      'core.smtp.username': '',
      'core.smtp.password': '',
      'core.upload_minimum_chunk_size': 5242880,
      'core.enable_notification_stream': true,
      'core.cors.allow_origin': '',
      'core.cors.allow_methods': 'GET, POST, PUT, HEAD, DELETE',
      'core.cors.allow_headers':
        'Accept-Encoding, Authorization, Content-Disposition, Content-Type, Cookie, Girder-Authorization, Girder-OTP, Girder-Token',
      'core.add_to_group_policy': 'never',
      'core.collection_create_policy': { open: false, groups: [], users: [] },
      'core.user_default_folders': 'public_private',
      'core.route_table': { core_girder: '/' },
    });
    expect(await get('core.filehandle_max_size')).toBe(16777216);
    expect(await get('core.girder_mount_information')).toBeNull();
    expect(await get('core.http_only_cookies')).toBe(false);
    expect(await get('core.cors.expose_headers')).toBe('Girder-Total-Count, Content-Disposition');
  });

  it('saves the configuration page as the web client sends it (strings, nulls for empty fields)', async () => {
    const list = CONFIGURATION_PAGE_KEYS.map((key) => {
      if (key === 'core.route_table') return { key, value: { core_girder: '/' } };
      if (['core.api_keys', 'core.enable_password_login', 'core.enable_notification_stream'].includes(key))
        return { key, value: true };
      if (key === 'core.collection_create_policy')
        return { key, value: JSON.stringify({ open: false, groups: [], users: [] }) };
      const page: Record<string, string | null> = {
        'core.cookie_lifetime': '180',
        'core.smtp.port': '25',
        'core.upload_minimum_chunk_size': '5242880',
        'core.email_host': null,
        'core.server_root': null,
        'core.smtp.username': null,
        'core.smtp.password': null,
        'core.cors.allow_origin': null,
      };
      return { key, value: key in page ? page[key] : 'x' };
    });
    const fixed = new Map<string, unknown>([
      ['core.contact_email_address', 'admin@example.com'],
      ['core.banner_color', '#3F3B3B'],
      ['core.privacy_notice', 'https://example.org/privacy'],
      ['core.registration_policy', 'open'],
      ['core.email_verification', 'disabled'],
      ['core.smtp.encryption', 'none'],
      ['core.add_to_group_policy', 'never'],
      ['core.user_default_folders', 'public_private'],
      ['core.cors.allow_methods', 'GET, PUT'],
      ['core.cors.allow_headers', 'Content-Type'],
    ]);
    const body = list.map((e) => (fixed.has(e.key) ? { key: e.key, value: fixed.get(e.key) } : e));
    const res = await api
      .as(admin)
      .put('/system/setting')
      .type('form')
      .send({ list: JSON.stringify(body) });
    expect([res.status, res.body]).toEqual([200, true]);
    expect(await get('core.cookie_lifetime')).toBe(180);
    expect(await get('core.brand_name')).toBe('x');
    expect(await get('core.smtp_host')).toBe('x');
    await unset('core.brand_name');
    await unset('core.smtp_host');
  });

  it.each([
    ['core.api_keys', 'yes', 'API key setting must be boolean.'],
    ['core.brand_name', '', 'The brand name may not be empty'],
    ['core.collection_create_policy', '[1]', 'Collection creation policy must be a JSON object.'],
    ['core.collection_create_policy', '{"open": "yes"}', 'Collection creation policy "open" must be boolean.'],
    ['core.collection_create_policy', '{"groups": ["nope"]}', 'Invalid group id (nope).'],
    [
      'core.collection_create_policy',
      '{"users": "x"}',
      'Collection creation policy "users" must be a list of user ids.',
    ],
    [
      'core.collection_create_policy',
      '{"groups": ["aaaaaaaaaaaaaaaaaaaaaaaa"]}',
      'No such group: aaaaaaaaaaaaaaaaaaaaaaaa',
    ],
    [
      'core.collection_create_policy',
      '{"users": ["aaaaaaaaaaaaaaaaaaaaaaaa"]}',
      'No such user: aaaaaaaaaaaaaaaaaaaaaaaa',
    ],
    ['core.contact_email_address', 'Admin <admin@example.com>', 'Contact email address must be a valid email address.'],
    ['core.cookie_lifetime', '0', 'Cookie lifetime must be a number > 0.0.'],
    ['core.cookie_lifetime', '"soon"', 'Cookie lifetime must be a number > 0.0.'],
    ['core.cors.allow_headers', '12', 'Allowed headers must be a comma-separated list or an empty string.'],
    ['core.cors.allow_methods', '[]', 'Allowed methods must be a comma-separated list or an empty string.'],
    [
      'core.cors.allow_origin',
      'true',
      'Allowed origin must be a comma-separated list of base urls or * or an empty string.',
    ],
    ['core.cors.expose_headers', '{}', 'CORS exposed headers must be a string'],
    ['core.email_from_address', '""', 'Email from address must not be blank.'],
    ['core.email_host', '3', 'Email host must be a string.'],
    ['core.email_verification', 'sometimes', 'Email verification must be "required", "optional", or "disabled".'],
    ['core.enable_notification_stream', '1', 'Enable notification stream option must be boolean.'],
    ['core.filehandle_max_size', '-1', 'Maximum file size for filehandle must be an integer >= 0.'],
    [
      'core.girder_mount_information',
      '{"where": "/mnt"}',
      'Girder mount information must be a dict with the "path" key.',
    ],
    ['core.http_only_cookies', 'no', 'HTTP only cookies setting must be boolean.'],
    ['core.privacy_notice', '""', 'The privacy notice link may not be empty'],
    ['core.registration_policy', 'maybe', 'Registration policy must be "open", "closed", or "approve".'],
    ['core.route_table', '{"other": "/x"}', 'Girder root must be routable.'],
    ['core.route_table', '{"core_girder": "x"}', 'Routes must begin with a forward slash.'],
    ['core.route_table', '{"core_girder": "/", "other": "/"}', 'Routes must be unique.'],
    ['core.server_root', 'ftp://example.org', 'Server root must start with http:// or https://.'],
    ['core.smtp.encryption', 'TLS', 'SMTP encryption must be one of "none", "starttls", or "ssl".'],
    ['core.smtp_host', '""', 'SMTP host must not be blank.'],
    ['core.smtp.password', '5', 'SMTP password must be a string'],
    ['core.smtp.port', '0', 'SMTP port must be an integer > 0.'],
    ['core.smtp.port', '"25.5"', 'SMTP port must be an integer > 0.'],
    ['core.smtp.username', 'false', 'SMTP username must be a string'],
    ['core.upload_minimum_chunk_size', '-5', 'Upload minimum chunk size must be an integer >= 0.'],
    ['core.user_default_folders', 'some', 'User default folders must be either "public_private" or "none".'],
  ])('refuses %s = %s: %s', async (key, value, message) => {
    const before = await api.headPosition();
    const res = await put(key, value);
    expect([res.status, res.body]).toEqual([400, refused(message)]);
    expect(await api.headPosition()).toBe(before);
  });

  it.each([
    [
      'core.cors.allow_origin',
      'http://a.example/, http://b.example  http://a.example',
      'http://a.example, http://b.example',
    ],
    ['core.cors.allow_methods', 'get,put  GET', 'GET, PUT'],
    ['core.cors.allow_headers', 'X-A,X-B X-A', 'X-A, X-B'],
    ['core.smtp.port', '"2525"', 2525],
    ['core.cookie_lifetime', '" 0.5 "', 0.5],
    ['core.email_host', '"  https://data.example.org  "', 'https://data.example.org'],
    ['core.registration_policy', 'APPROVE', 'approve'],
  ])('normalises %s = %s as Girder does', async (key, value, stored) => {
    expect((await put(key, value)).status).toBe(200);
    expect(await get(key)).toEqual(stored);
    await unset(key);
  });

  it('records each change as an event on the settings stream', async () => {
    const before = await api.headPosition();
    expect((await put('core.smtp.port', '2525')).status).toBe(200);
    const events = [];
    for await (const event of api.runtime.services.eventStore.readStream('settings-system')) events.push(event);
    const last = events[events.length - 1];
    expect([last.type, last.data]).toEqual(['SettingChanged', { key: 'core.smtp.port', value: 2525 }]);
    expect(last.position).toBeGreaterThan(before);
    await unset('core.smtp.port');
  });

  it('honours the cookie lifetime for new login tokens', async () => {
    expect((await put('core.cookie_lifetime', '2')).status).toBe(200);
    const login = await api
      .anonymous()
      .get('/user/authentication')
      .set('Authorization', `Basic ${Buffer.from('someone:password1').toString('base64')}`);
    expect(login.status).toBe(200);
    const days = (Date.parse(login.body.authToken.expires) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(1.99);
    expect(days).toBeLessThanOrEqual(2);
    await unset('core.cookie_lifetime');
  });

  it('gives new users no default folders when the setting says none', async () => {
    expect((await put('core.user_default_folders', 'none')).status).toBe(200);
    const bare = await api.createUser('nofolders');
    const folders = await api.as(bare).get('/folder').query({ parentType: 'user', parentId: bare._id });
    expect([folders.status, folders.body]).toEqual([200, []]);
    await unset('core.user_default_folders');
    const usual = await api.createUser('withfolders');
    const theirs = await api.as(usual).get('/folder').query({ parentType: 'user', parentId: usual._id });
    expect(theirs.body.map((f: { name: string }) => f.name)).toEqual(['Private', 'Public']);
  });

  it('honours the upload minimum chunk size for chunks that do not end their upload', async () => {
    const folder = await api.defaultFolder(user, 'Private');
    const start = async () =>
      (await api.as(user).post('/file').query({ parentType: 'folder', parentId: folder, name: 'c.bin', size: 10 })).body
        ._id as string;
    const chunk = (uploadId: string, offset: number, bytes: string) =>
      api
        .as(user)
        .post('/file/chunk')
        .query({ uploadId, offset })
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from(bytes));
    const first = await start();
    const small = await chunk(first, 0, '12345');
    expect([small.status, small.body]).toEqual([
      400,
      { message: 'Chunk is smaller than the minimum size.', type: 'validation' },
    ]);
    // The whole file in one chunk ends the upload, whatever its size.
    expect((await chunk(first, 0, '1234567890')).status).toBe(200);
    expect((await put('core.upload_minimum_chunk_size', '4')).status).toBe(200);
    const second = await start();
    expect((await chunk(second, 0, '12345')).status).toBe(200);
    expect((await chunk(second, 5, '678')).body).toEqual({
      message: 'Chunk is smaller than the minimum size.',
      type: 'validation',
    });
    expect((await chunk(second, 5, '67890')).status).toBe(200);
    await unset('core.upload_minimum_chunk_size');
  });

  it('holds the chunk minimum for a first chunk sent in the body of POST /file, and starts nothing then', async () => {
    const folder = await api.defaultFolder(user, 'Private');
    const startWith = (name: string, size: number, bytes: string) =>
      api
        .as(user)
        .post('/file')
        .query({ parentType: 'folder', parentId: folder, name, size })
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from(bytes));
    const short = await startWith('short.bin', 10, '12345');
    expect([short.status, short.body]).toEqual([
      400,
      { message: 'Chunk is smaller than the minimum size.', type: 'validation' },
    ]);
    const items = await api.as(user).get('/item').query({ folderId: folder, name: 'short.bin' });
    expect(items.body).toEqual([]);
    const uploads = await api.as(admin).get('/system/uploads').query({ userId: user._id });
    expect([uploads.status, uploads.body]).toEqual([200, []]);
    // The whole file in the body ends the upload, whatever its size.
    const whole = await startWith('whole.bin', 5, '12345');
    expect([whole.status, whole.body.name, whole.body.size]).toEqual([200, 'whole.bin', 5]);
  });

  it('switches API keys and the notification stream off and on again', async () => {
    const key = await api.as(user).post('/api_key').type('form').send({ name: 'before' });
    expect(key.status).toBe(200);
    expect((await put('core.api_keys', 'false')).status).toBe(200);
    expect((await put('core.enable_notification_stream', 'false')).status).toBe(200);
    const off = { message: 'API key functionality is disabled on this instance.', type: 'rest' };
    const create = await api.as(user).post('/api_key').type('form').send({ name: 'during' });
    expect([create.status, create.body]).toEqual([400, off]);
    const exchange = await api.anonymous().post('/api_key/token').type('form').send({ key: key.body.key });
    expect([exchange.status, exchange.body]).toEqual([400, off]);
    const stream = await api.as(user).get('/notification/stream').query({ timeout: 0 });
    expect([stream.status, stream.body]).toEqual([
      503,
      { message: 'The notification stream is not enabled.', type: 'rest' },
    ]);
    await unset('core.api_keys');
    await unset('core.enable_notification_stream');
    expect((await api.anonymous().post('/api_key/token').type('form').send({ key: key.body.key })).status).toBe(200);
    expect((await api.as(user).get('/notification/stream').query({ timeout: 0 })).status).toBe(200);
  });

  describe('collection creation policy', () => {
    let groupId: string;
    let member: TestUser;
    beforeAll(async () => {
      member = await api.createUser('member');
      const group = await api.as(admin).post('/group').type('form').send({ name: 'Creators' });
      groupId = group.body._id;
      const added = await api
        .as(admin)
        .post(`/group/${groupId}/invitation`)
        .type('form')
        .send({ userId: member._id, force: 'true' });
      expect(added.status).toBe(200);
    });
    const create = (caller: TestUser, name: string) => api.as(caller).post('/collection').type('form').send({ name });

    it('lets only site administrators create collections by default', async () => {
      const res = await create(user, 'Mine');
      expect([res.status, res.body]).toEqual([
        403,
        { message: 'You are not authorized to create collections.', type: 'access' },
      ]);
      expect((await api.anonymous().post('/collection').type('form').send({ name: 'Anon' })).body).toEqual({
        message: 'You must be logged in.',
        type: 'access',
      });
      expect((await create(admin, 'By admin')).status).toBe(200);
    });

    it('lets the users and group members it lists create them, and lists them for the access widget', async () => {
      const policy = { open: true, users: [user._id], groups: [groupId] };
      expect((await put('core.collection_create_policy', policy)).status).toBe(200);
      expect((await create(user, 'By a listed user')).status).toBe(200);
      expect((await create(member, 'By a member')).status).toBe(200);
      const access = await api.as(admin).get('/system/setting/collection_creation_policy/access');
      expect(access.status).toBe(200);
      expect(access.body).toEqual({
        users: [{ id: user._id, login: 'someone', name: 'First Last' }],
        groups: [{ id: groupId, name: 'Creators', description: '' }],
      });
      const byUser = await api.as(user).get('/system/setting/collection_creation_policy/access');
      expect([byUser.status, byUser.body]).toEqual([
        403,
        { message: 'Administrator access required.', type: 'access' },
      ]);
    });

    it('lets everyone create them when open, and nobody but administrators when closed again', async () => {
      const outsider = await api.createUser('outsider');
      expect((await put('core.collection_create_policy', { open: true })).status).toBe(200);
      expect((await create(outsider, 'Open to all')).status).toBe(200);
      expect((await put('core.collection_create_policy', { open: false, users: [outsider._id] })).status).toBe(200);
      expect((await create(outsider, 'Listed, closed')).status).toBe(200);
      await unset('core.collection_create_policy');
      expect((await create(outsider, 'Not any more')).status).toBe(403);
    });
  });
});
