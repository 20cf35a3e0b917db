import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';

/**
 * Girder's user_quota plugin: `GET`/`PUT /user|collection/:id/quota` with its policy keys and messages, the default
 * quota settings, and the quota enforced when an upload starts and when it finishes, two uploads finishing together
 * included.
 */
describe('quotas', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let folderId: string;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    folderId = await api.defaultFolder(alice, 'Private');
  });
  afterAll(() => api?.close());

  const setPolicy = (policy: unknown) =>
    api
      .as(admin)
      .put(`/user/${alice._id}/quota`)
      .type('form')
      .send({ policy: JSON.stringify(policy) });
  const startUpload = (name: string, size: number) =>
    api.as(alice).post('/file').query({ parentType: 'folder', parentId: folderId, name, size });
  const chunk = (uploadId: string, bytes: Buffer) =>
    api
      .as(alice)
      .post('/file/chunk')
      .query({ uploadId, offset: 0 })
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);

  it('shows and sets the policy, with Girder’s messages for bad keys and values', async () => {
    const shown = await api.as(alice).get(`/user/${alice._id}/quota`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ _id: alice._id, login: 'alice', quota: { _currentFileSizeQuota: null } });
    const notAdmin = await api.as(alice).put(`/user/${alice._id}/quota`).query({ policy: '{}' });
    expect([notAdmin.status, notAdmin.body.message]).toEqual([403, 'Administrator access required.']);
    const other = await api.as(alice).get(`/user/${admin._id}/quota`);
    expect(other.status).toBe(403);

    const cases: [unknown, string][] = [
      [
        { nope: 1 },
        'nope is not a valid quota policy key.  Valid keys are fallbackAssetstore, fileSizeQuota, ' +
          'preferredAssetstore, useQuotaDefault.',
      ],
      [
        { fileSizeQuota: -1 },
        'Invalid quota.  Must be blank or a non-negative integer representing the limit in bytes.',
      ],
      [{ useQuotaDefault: 'maybe' }, 'Invalid useQuotaDefault.  Must either be true or false.'],
      [
        { preferredAssetstore: 'x' },
        'Invalid preferredAssetstore.  Must either be an assetstore ID, or be blank or "current" to use the current ' +
          'assetstore.',
      ],
    ];
    for (const [policy, message] of cases) {
      const res = await setPolicy(policy);
      expect([policy, res.status, res.body.message]).toEqual([policy, 400, message]);
    }
    const set = await setPolicy({ fileSizeQuota: 100, useQuotaDefault: false, _ignored: 1 });
    expect([set.status, set.body.quota]).toEqual([200, { fileSizeQuota: 100, useQuotaDefault: false }]);
    const after = await api.as(alice).get(`/user/${alice._id}/quota`);
    expect(after.body.quota).toEqual({ fileSizeQuota: 100, useQuotaDefault: false, _currentFileSizeQuota: 100 });
  });

  it('refuses an upload that would not fit, when it starts', async () => {
    const res = await startUpload('big.bin', 101);
    expect([res.status, res.body]).toEqual([
      400,
      {
        message: 'Upload would exceed file storage quota (need 101 B, only 100 B available - used 0 B out of 100 B)',
        type: 'validation',
        field: 'size',
      },
    ]);
  });

  it('lets only one of two uploads that fit alone but not together finish, and cancels the other', async () => {
    const first = await startUpload('first.bin', 60);
    const second = await startUpload('second.bin', 60);
    expect([first.status, second.status]).toEqual([200, 200]);
    const [a, b] = await Promise.all([
      chunk(first.body._id, Buffer.alloc(60, 1)),
      chunk(second.body._id, Buffer.alloc(60, 2)),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 400]);
    const refused = a.status === 400 ? a : b;
    expect(refused.body).toEqual({
      message: 'Upload exceeded file storage quota (need 60 B, only 40 B available - used 60 B out of 100 B)',
      type: 'validation',
      field: 'size',
    });
    const user = await api.as(admin).get(`/user/${alice._id}`);
    expect(user.body.size).toBe(60);
  });

  it('sends uploads to the preferred assetstore, else the fallback, else refuses them', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'preferred-store-'));
    try {
      const store = await api.as(admin).post('/assetstore').query({ name: 'Preferred', type: 0, root });
      expect(store.status).toBe(200);
      expect((await setPolicy({ preferredAssetstore: store.body._id, fileSizeQuota: '' })).status).toBe(200);
      const started = await startUpload('preferred.bin', 5);
      expect([started.status, started.body.assetstoreId]).toEqual([200, store.body._id]);

      const gone = '0123456789abcdef01234567';
      expect((await setPolicy({ preferredAssetstore: gone, fallbackAssetstore: 'current' })).status).toBe(200);
      const fallback = await startUpload('fallback.bin', 5);
      expect([fallback.status, fallback.body.assetstoreId]).toEqual([200, '000000000000000000000001']);

      expect((await setPolicy({ fallbackAssetstore: 'none' })).status).toBe(200);
      const refused = await startUpload('refused.bin', 5);
      expect([refused.status, refused.body]).toEqual([
        400,
        { message: 'Required assetstore is unavailable', type: 'validation' },
      ]);
      expect((await setPolicy({ preferredAssetstore: 'current', fallbackAssetstore: '' })).status).toBe(200);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('uses the default quota setting unless the policy says otherwise', async () => {
    const setting = await api
      .as(admin)
      .put('/system/setting')
      .query({ key: 'user_quota.default_user_quota', value: '1000' });
    expect(setting.status).toBe(200);
    expect((await setPolicy({ useQuotaDefault: true })).status).toBe(200);
    expect((await api.as(alice).get(`/user/${alice._id}/quota`)).body.quota._currentFileSizeQuota).toBe(1000);
    expect((await startUpload('fits.bin', 900)).status).toBe(200);
    const bad = await api.as(admin).put('/system/setting').query({ key: 'user_quota.default_user_quota', value: '-5' });
    expect([bad.status, bad.body]).toEqual([
      400,
      {
        message: 'Invalid quota.  Must be blank or a non-negative integer representing the limit in bytes.',
        type: 'validation',
        field: 'value',
      },
    ]);
  });
});
