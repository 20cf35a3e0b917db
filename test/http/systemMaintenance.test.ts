import fs from 'node:fs';
import path from 'node:path';
import { ok, startApi, type ApiClient, type Caller, type TestUser } from '../support/apiClient';

/**
 * Girder's system maintenance routes: GET /system/configuration, GET and DELETE /system/uploads, GET and PUT
 * /system/check, GET /system/log, GET and PUT /system/log/level.
 */

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bobby: TestUser;
let aliceFolder: string;
let bobbyFolder: string;

const ADMIN_ONLY = { message: 'Administrator access required.', type: 'access' };

/** Starts a chunked upload (no bytes yet, or `first` as its first chunk); returns its upload document. */
async function startUpload(user: TestUser, folderId: string, name: string, first?: string) {
  const query = { parentType: 'folder', parentId: folderId, name, size: 100 };
  const req = api.as(user).post('/file').query(query);
  const res = first === undefined ? await req : await req.set('Content-Type', 'text/plain').send(first);
  return ok<Record<string, unknown> & { _id: string }>(res, `start upload ${name}`);
}

beforeAll(async () => {
  api = await startApi({}, { captureLog: true });
  admin = await api.createUser('admin');
  await api.allowSmallChunks(admin); // The uploads below start with a partial first chunk of a few bytes.
  alice = await api.createUser('alice');
  bobby = await api.createUser('bobby');
  aliceFolder = await api.defaultFolder(alice, 'Private');
  bobbyFolder = await api.defaultFolder(bobby, 'Private');
});
afterAll(() => api.close());

describe.each<[string, string, Record<string, string>]>([
  ['GET', '/system/configuration', { section: 'server', key: 'mode' }],
  ['GET', '/system/uploads', {}],
  ['DELETE', '/system/uploads', {}],
  ['PUT', '/system/check', {}],
  ['GET', '/system/log', {}],
  ['GET', '/system/log/level', {}],
  ['PUT', '/system/log/level', { level: 'INFO' }],
])('%s %s', (method, path, query) => {
  const send = (caller: Caller) =>
    method === 'GET'
      ? api.as(caller).get(path).query(query)
      : method === 'PUT'
        ? api.as(caller).put(path).query(query)
        : api.as(caller).delete(path).query(query);
  it('refuses a user (403) and an anonymous caller (401)', async () => {
    const user = await send(alice);
    expect([user.status, user.body]).toEqual([403, ADMIN_ONLY]);
    const anonymous = await send(null);
    expect([anonymous.status, anonymous.body]).toEqual([401, ADMIN_ONLY]);
  });
});

describe('GET /system/configuration', () => {
  it.each([
    ['server', 'mode', 'development'],
    ['server', 'api_root', 'api/v1'],
    ['logging', 'log_access', ['screen']],
  ])('answers [%s] %s', async (section, key, value) => {
    const res = await api.as(admin).get('/system/configuration').query({ section, key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(value);
  });

  it.each([
    [{ section: 'database', key: 'uri' }, 'No section with that name exists.'],
    [{ section: 'toString', key: 'x' }, 'No section with that name exists.'],
    [{ section: 'server', key: 'password' }, 'No key with that name exists.'],
    [{ section: 'server', key: '__proto__' }, 'No key with that name exists.'],
  ])('refuses %j', async (query, message) => {
    const res = await api.as(admin).get('/system/configuration').query(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message, type: 'validation' });
  });

  it('requires section and key', async () => {
    const res = await api.as(admin).get('/system/configuration').query({ section: 'server' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: "Parameter 'key' is required.", type: 'rest' });
  });
});

describe('GET and DELETE /system/uploads', () => {
  it('lists uploads in progress with their filters, and discards them as their cancellation', async () => {
    const a = await startUpload(alice, aliceFolder, 'a.txt', 'abc');
    const b = await startUpload(bobby, bobbyFolder, 'b.txt');
    const done = await api
      .as(alice)
      .post('/file')
      .query({ parentType: 'folder', parentId: aliceFolder, name: 'whole.txt', size: 5 })
      .set('Content-Type', 'text/plain')
      .send('whole');
    expect(done.body._modelType).toBe('file');

    const all = await api.as(admin).get('/system/uploads');
    expect(all.status).toBe(200);
    expect(all.body).toEqual([a, b]);
    expect(all.body[0]).toMatchObject({ _modelType: 'upload', received: 3, userId: alice._id, parentId: aliceFolder });

    const filtered = async (query: Record<string, string | number>) =>
      ((await api.as(admin).get('/system/uploads').query(query)).body as { _id: string }[]).map((u) => u._id);
    expect(await filtered({ userId: bobby._id })).toEqual([b._id]);
    expect(await filtered({ parentId: aliceFolder })).toEqual([a._id]);
    expect(await filtered({ uploadId: b._id })).toEqual([b._id]);
    expect(await filtered({ uploadId: 'nothing' })).toEqual([]);
    expect(await filtered({ assetstoreId: 'any' })).toEqual([]);
    expect(await filtered({ minimumAge: 1 })).toEqual([]);
    expect(await filtered({ minimumAge: 0 })).toEqual([a._id, b._id]);
    expect(await filtered({ limit: 1, offset: 1 })).toEqual([b._id]);
    expect(await filtered({ sort: 'received', sortdir: -1 })).toEqual([a._id, b._id]);
    expect(await filtered({ sort: 'received' })).toEqual([b._id, a._id]);
    expect(await filtered({ sort: 'updated', sortdir: -1 })).toEqual([b._id, a._id]);
    const badSort = await api.as(admin).get('/system/uploads').query({ sort: 'access' });
    expect(badSort.status).toBe(400);
    expect(badSort.body).toEqual({
      message:
        'Invalid value for sort: "access". Allowed values: _id, created, updated, size, name, mimeType, received, userId, parentType, parentId, fileId.',
      type: 'rest',
    });

    const discarded = await api.as(admin).delete('/system/uploads').query({ userId: alice._id });
    expect(discarded.status).toBe(200);
    expect(discarded.body).toEqual([a]);
    const offset = await api.as(alice).get('/file/offset').query({ uploadId: a._id });
    expect(offset.body).toEqual({ message: `Invalid upload id (${a._id}).`, type: 'rest' });
    expect((await api.as(admin).get('/system/uploads')).body).toEqual([b]);

    expect((await api.as(admin).delete('/system/uploads')).body).toEqual([b]);
    expect((await api.as(admin).get('/system/uploads')).body).toEqual([]);
  });

  it('lists and removes partial upload files that belong to no upload in progress (untracked)', async () => {
    const dir = path.join(api.runtime.services.config.dataDir, 'uploads');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'leftover.part'), 'x');
    const untracked = { _modelType: 'untrackedUpload', name: 'leftover.part' };
    expect((await api.as(admin).get('/system/uploads')).body).toEqual([untracked]);
    expect((await api.as(admin).get('/system/uploads').query({ includeUntracked: false })).body).toEqual([]);
    expect((await api.as(admin).get('/system/uploads').query({ assetstoreId: 'any' })).body).toEqual([]);
    expect((await api.as(admin).delete('/system/uploads').query({ includeUntracked: false })).body).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'leftover.part'))).toBe(true);
    const removed = await api.as(admin).delete('/system/uploads');
    expect([removed.status, removed.body]).toEqual([200, [untracked]]);
    expect(fs.existsSync(path.join(dir, 'leftover.part'))).toBe(false);
    expect((await api.as(admin).get('/system/uploads')).body).toEqual([]);
  });

  it('applies minimumAge to partial upload files too, by when they were last written', async () => {
    const dir = path.join(api.runtime.services.config.dataDir, 'uploads');
    fs.mkdirSync(dir, { recursive: true });
    const oldFile = path.join(dir, 'old.part');
    fs.writeFileSync(oldFile, 'x');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    fs.utimesSync(oldFile, twoDaysAgo, twoDaysAgo);
    fs.writeFileSync(path.join(dir, 'new.part'), 'y');
    const names = (body: { name: string }[]) => body.map((entry) => entry.name).sort();
    expect(names((await api.as(admin).get('/system/uploads').query({ minimumAge: 1 })).body)).toEqual(['old.part']);
    expect(names((await api.as(admin).get('/system/uploads').query({ minimumAge: 3 })).body)).toEqual([]);
    expect(names((await api.as(admin).get('/system/uploads')).body)).toEqual(['new.part', 'old.part']);
    const removed = await api.as(admin).delete('/system/uploads').query({ minimumAge: 1.5 });
    expect([removed.status, removed.body]).toEqual([200, [{ _modelType: 'untrackedUpload', name: 'old.part' }]]);
    expect([fs.existsSync(oldFile), fs.existsSync(path.join(dir, 'new.part'))]).toEqual([false, true]);
    await api.as(admin).delete('/system/uploads');
    expect((await api.as(admin).get('/system/uploads')).body).toEqual([]);
  });

  it.each(['soon', '', 'NaN', 'Infinity'])('refuses minimumAge=%j', async (minimumAge) => {
    for (const method of ['get', 'delete'] as const) {
      const res = await api.as(admin)[method]('/system/uploads').query({ minimumAge });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        message: `Invalid value for numeric parameter minimumAge: ${minimumAge}.`,
        type: 'rest',
      });
    }
  });
});

describe('GET /system/check', () => {
  it('answers anyone the basic status', async () => {
    const res = await api.anonymous().get('/system/check');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['bootTime', 'currentTime', 'processStartTime', 'requestBase']);
    expect(res.body.requestBase).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(res.body.processStartTime).toBeLessThanOrEqual(res.body.currentTime);
  });

  it('answers an administrator the quick and slow details, and refuses them to others', async () => {
    const quick = await api.as(admin).get('/system/check').query({ mode: 'quick' });
    expect(quick.status).toBe(200);
    expect(quick.body).toMatchObject({ cpuCount: expect.any(Number), exe: process.execPath, cwd: process.cwd() });
    const slow = await api.as(admin).get('/system/check').query({ mode: 'slow' });
    expect(slow.body.loadAverage).toHaveLength(3);
    const user = await api.as(alice).get('/system/check').query({ mode: 'quick' });
    expect([user.status, user.body]).toEqual([403, ADMIN_ONLY]);
    const anonymous = await api.anonymous().get('/system/check').query({ mode: 'slow' });
    expect([anonymous.status, anonymous.body]).toEqual([401, ADMIN_ONLY]);
  });

  it('refuses an unknown mode', async () => {
    const res = await api.anonymous().get('/system/check').query({ mode: 'deep' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'Invalid value for mode: "deep". Allowed values: basic, quick, slow.',
      type: 'rest',
    });
  });
});

describe('PUT /system/check', () => {
  it("reports Girder's counts and that the read models match a replay of the log", async () => {
    const res = await api.as(admin).put('/system/check');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      orphansRemoved: 0,
      baseParentsFixed: 0,
      sizesChanged: 0,
      readModels: { matches: true, events: expect.any(Number), position: expect.any(String), differences: [] },
    });
    expect(res.body.readModels.events).toBeGreaterThan(0);
  });

  it('records its progress when asked, as a notification for the administrator', async () => {
    const res = await api.as(admin).put('/system/check').query({ progress: true });
    expect(res.status).toBe(200);
    const notifications = await api.as(admin).get('/notification');
    expect(notifications.status).toBe(200);
    const titles = (notifications.body as { data: { title: string; state: string } }[]).map((n) => n.data);
    expect(titles).toContainEqual(
      expect.objectContaining({ title: 'Running system consistency check', state: 'success' }),
    );
  });
});

describe('the log and its level', () => {
  const logText = async (query: Record<string, string | number>) => {
    const res = await api.as(admin).get('/system/log').query(query).buffer(true);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    return res.text;
  };

  it('changes the level at runtime, and the log shows what was logged at it', async () => {
    const initial = await api.as(admin).get('/system/log/level');
    expect([initial.status, initial.body]).toEqual([200, 'SILENT']);
    expect(await logText({ log: 'info', bytes: 0 })).toBe('=== Last 0 bytes of the info log: ===\n\n');

    const set = await api.as(admin).put('/system/log/level').query({ level: 'INFO' });
    expect([set.status, set.body]).toEqual([200, 'INFO']);
    expect((await api.as(admin).get('/system/log/level')).body).toBe('INFO');
    await api.anonymous().get('/system/version');

    const info = await logText({ log: 'info', bytes: 0 });
    expect(info).toMatch(/^=== Last \d+ bytes of the info log: ===\n\n/);
    expect(info).toContain('"url":"/api/v1/system/version"');
    expect(info).toContain('"msg":"request completed"');
    // Request lines are info: the error log (warnings and worse) has none.
    expect(await logText({})).toBe('=== Last 0 bytes of the error log: ===\n\n');

    const whole = info.slice(info.indexOf('\n\n') + 2);
    expect(await logText({ log: 'info', bytes: 20 })).toBe(
      `=== Last 20 bytes of the info log: ===\n\n${whole.slice(whole.length - 20)}`,
    );

    expect((await api.as(admin).put('/system/log/level').query({ level: 'WARNING' })).body).toBe('WARNING');
    const before = await logText({ log: 'info', bytes: 0 });
    await api.anonymous().get('/system/version');
    expect(await logText({ log: 'info', bytes: 0 })).toBe(before);
  });

  it.each([
    [{ log: 'access' }, 'Invalid value for log: "access". Allowed values: error, info.'],
    [{ bytes: -1 }, 'Invalid value for integer parameter bytes: -1. It must be between 0 and 9007199254740991.'],
  ])('GET /system/log refuses %j', async (query, message) => {
    const res = await api.as(admin).get('/system/log').query(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message, type: 'rest' });
  });

  it('PUT /system/log/level refuses a level Girder does not know', async () => {
    const res = await api.as(admin).put('/system/log/level').query({ level: 'TRACE' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'Invalid value for level: "TRACE". Allowed values: CRITICAL, ERROR, WARNING, INFO, DEBUG.',
      type: 'rest',
    });
  });
});
