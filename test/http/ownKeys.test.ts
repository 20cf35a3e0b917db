import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

/**
 * Rule 1 of docs/http-conventions.md (issue 28): text from a request never indexes a plain object. Keys that every
 * object answers from Object.prototype are unknown keys like any other: a 400 naming the parameter, nothing appended.
 */
const PROTOTYPE_KEYS = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'];

let api: ApiClient;
let admin: TestUser;

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
});
afterAll(async () => api.close());

const invalidKey = (key: string) => ({ message: `Invalid setting key "${key}".`, type: 'validation', field: 'key' });

describe('settings keys are own keys of the settings table', () => {
  it.each(PROTOTYPE_KEYS)('PUT, GET and DELETE /system/setting?key=%s answer 400 and append nothing', async (key) => {
    const head = await api.headPosition();
    const put = await api.as(admin).put('/system/setting').query({ key, value: '"x"' });
    expect([put.status, put.body]).toEqual([400, invalidKey(key)]);
    const get = await api.as(admin).get('/system/setting').query({ key });
    expect([get.status, get.body]).toEqual([400, invalidKey(key)]);
    const del = await api.as(admin).delete('/system/setting').query({ key });
    expect([del.status, del.body]).toEqual([400, invalidKey(key)]);
    expect(await api.headPosition()).toBe(head);
  });

  it('refuses prototype-named keys inside list= (PUT and GET), all or nothing', async () => {
    const head = await api.as(admin).get('/system/setting').query({ key: 'core.brand_name' });
    for (const key of PROTOTYPE_KEYS) {
      const list = JSON.stringify([
        { key: 'core.brand_name', value: 'Changed' },
        { key, value: 'x' },
      ]);
      const put = await api.as(admin).put('/system/setting').query({ list });
      expect([put.status, put.body]).toEqual([400, invalidKey(key)]);
      const get = await api
        .as(admin)
        .get('/system/setting')
        .query({ list: JSON.stringify(['core.brand_name', key]) });
      expect([get.status, get.body]).toEqual([400, invalidKey(key)]);
    }
    const after = await api.as(admin).get('/system/setting').query({ key: 'core.brand_name' });
    expect(after.body).toBe(head.body);
  });

  it('still reads, sets and unsets a known key', async () => {
    const put = await api.as(admin).put('/system/setting').query({ key: 'core.brand_name', value: 'Own' });
    expect(put.status).toBe(200);
    expect((await api.as(admin).get('/system/setting').query({ key: 'core.brand_name' })).body).toBe('Own');
    expect((await api.as(admin).delete('/system/setting').query({ key: 'core.brand_name' })).status).toBe(200);
    expect((await api.as(admin).get('/system/setting').query({ key: 'core.brand_name' })).body).toBe('Folder Service');
  });
});

describe('other lookups keyed by request text', () => {
  it.each(PROTOTYPE_KEYS)('GET /resource/search?mode=%s is an unknown mode', async (mode) => {
    const res = await api.as(admin).get('/resource/search').query({ q: 'a', mode, types: '["folder"]' });
    expect([res.status, res.body]).toEqual([
      400,
      { message: `Search mode handler '${mode}' not found.`, type: 'rest' },
    ]);
  });

  it('GET /resource/search leaves prototype-named types out of the answer', async () => {
    const res = await api
      .as(admin)
      .get('/resource/search')
      .query({ q: 'a', types: JSON.stringify([...PROTOTYPE_KEYS, 'user']) });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['user']);
  });

  it.each(PROTOTYPE_KEYS)('a file id %s is not a file of an item', async (fileId) => {
    const res = await api.as(admin).delete(`/file/${fileId}`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(`Invalid file id (${fileId}).`);
  });
});
