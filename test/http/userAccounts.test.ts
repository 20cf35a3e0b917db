import { ApiClient, startApi, type TestUser } from '../support/apiClient';

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

describe('user accounts: profile, password, removal', () => {
  let api: ApiClient;
  let admin: TestUser;
  let ann: TestUser;
  let ben: TestUser;
  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    ann = await api.createUser('annie');
    ben = await api.createUser('benny');
  });
  afterAll(() => api.close());

  const profile = (overrides: Record<string, string> = {}) => ({
    firstName: 'Ann',
    lastName: 'Example',
    email: 'annie@example.com',
    ...overrides,
  });
  const update = (caller: TestUser | null, id: string, form: Record<string, string>) =>
    api.as(caller).put(`/user/${id}`).type('form').send(form);
  const login = (name: string, password: string) =>
    api.anonymous().get('/user/authentication').set('Authorization', basic(name, password));
  const streamTypes = async (userId: string) => {
    const types: string[] = [];
    for await (const event of api.runtime.services.eventStore.readStream(`user-${userId}`)) types.push(event.type);
    return types;
  };

  describe('PUT /user/:id', () => {
    it('updates one’s own names and address, trimmed and lower-cased, as an event', async () => {
      const res = await update(
        ann,
        ann._id,
        profile({ firstName: '  Anne ', lastName: ' Other ', email: ' ANNE@Example.com ' }),
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        _id: ann._id,
        login: 'annie',
        firstName: 'Anne',
        lastName: 'Other',
        email: 'anne@example.com',
        admin: false,
        status: 'enabled',
        _accessLevel: 2,
      });
      expect((await api.as(ann).get('/user/me')).body.email).toBe('anne@example.com');
      expect(await streamTypes(ann._id)).toEqual(['UserRegistered', 'UserProfileUpdated']);
      // The old address is free again, the new one is taken; the listing sorts by the new name.
      const taken = await update(ben, ben._id, profile({ firstName: 'Ben', email: 'anne@example.com' }));
      expect([taken.status, taken.body]).toEqual([
        400,
        { message: 'That email is already registered.', type: 'validation', field: 'email' },
      ]);
      expect((await update(ben, ben._id, profile({ firstName: 'Ben', email: 'annie@example.com' }))).status).toBe(200);
      expect((await update(ben, ben._id, profile({ firstName: 'Ben', email: 'benny@example.com' }))).status).toBe(200);
      const listed = await api.as(admin).get('/user').query({ text: 'other' });
      expect(listed.body.map((u: { login: string }) => u.login)).toEqual(['annie']);
    });

    it.each([
      [{ firstName: '  ' }, { message: 'First name must not be empty.', type: 'validation', field: 'firstName' }],
      [{ lastName: '' }, { message: 'Last name must not be empty.', type: 'validation', field: 'lastName' }],
      [{ email: 'not an address' }, { message: 'Invalid email address.', type: 'validation', field: 'email' }],
    ])('refuses %j and changes nothing', async (overrides, error) => {
      const before = await api.headPosition();
      const res = await update(ann, ann._id, profile({ email: 'anne@example.com', ...overrides }));
      expect([res.status, res.body]).toEqual([400, error]);
      expect(await api.headPosition()).toBe(before);
    });

    it('needs every profile field and a known status', async () => {
      const missing = await api.as(ann).put(`/user/${ann._id}`).type('form').send({ firstName: 'A', lastName: 'B' });
      expect([missing.status, missing.body]).toEqual([
        400,
        { message: "Parameter 'email' is required.", type: 'rest' },
      ]);
      const status = await update(admin, ann._id, profile({ status: 'asleep' }));
      expect(status.status).toBe(400);
      expect(status.body.message).toMatch(/^Invalid value for status: "asleep"/);
    });

    it('leaves admin and status to site administrators', async () => {
      const self = { ...profile({ email: 'anne@example.com' }) };
      const promote = await update(ann, ann._id, { ...self, admin: 'true' });
      expect([promote.status, promote.body]).toEqual([
        403,
        { message: 'Only admins may change admin status.', type: 'access' },
      ]);
      const disable = await update(ann, ann._id, { ...self, status: 'disabled' });
      expect([disable.status, disable.body]).toEqual([
        403,
        { message: 'Only admins may change status.', type: 'access' },
      ]);
      // Sending the values the account already has is no change.
      expect((await update(ann, ann._id, { ...self, admin: 'false', status: 'enabled' })).status).toBe(200);
      const other = await update(ben, ann._id, self);
      expect([other.status, other.body]).toEqual([
        403,
        { message: `Write access denied for user ${ann._id} (user ${ben._id}).`, type: 'access' },
      ]);
      const anonymous = await update(null, ann._id, self);
      expect([anonymous.status, anonymous.body]).toEqual([401, { message: 'You must be logged in.', type: 'access' }]);
      const unknown = await update(admin, 'f'.repeat(24), self);
      expect([unknown.status, unknown.body]).toEqual([
        400,
        { message: `Invalid user id (${'f'.repeat(24)}).`, type: 'rest' },
      ]);
    });

    it('lets an administrator promote, disable and enable an account', async () => {
      const self = profile({ firstName: 'Ben', email: 'benny@example.com' });
      const promoted = await update(admin, ben._id, { ...self, admin: 'true' });
      expect([promoted.status, promoted.body.admin]).toEqual([200, true]);
      expect((await update(admin, ben._id, { ...self, admin: 'false' })).body.admin).toBe(false);
      expect((await update(admin, ben._id, { ...self, status: 'disabled' })).body.status).toBe('disabled');
      const refused = await login('benny', 'password1');
      expect([refused.status, refused.body]).toEqual([
        401,
        { message: 'Account is disabled.', type: 'access', extra: 'disabled' },
      ]);
      expect((await update(admin, ben._id, { ...self, status: 'enabled' })).body.status).toBe('enabled');
      expect((await login('benny', 'password1')).status).toBe(200);
    });
  });

  describe('PUT /user/:id/password', () => {
    it('lets a site administrator set a user’s password', async () => {
      const byUser = await api.as(ben).put(`/user/${ben._id}/password`).type('form').send({ password: 'another1' });
      expect([byUser.status, byUser.body]).toEqual([
        403,
        { message: 'Administrator access required.', type: 'access' },
      ]);
      const short = await api.as(admin).put(`/user/${ben._id}/password`).type('form').send({ password: 'abc' });
      expect([short.status, short.body]).toEqual([
        400,
        { message: 'Password must be at least 6 characters.', type: 'validation', field: 'password' },
      ]);
      const set = await api.as(admin).put(`/user/${ben._id}/password`).type('form').send({ password: 'another1' });
      expect([set.status, set.body]).toEqual([200, { message: 'Password changed.' }]);
      expect((await login('benny', 'another1')).status).toBe(200);
      expect((await login('benny', 'password1')).status).toBe(401);
    });
  });

  describe('DELETE /user/:id', () => {
    it('removes the user with its folders, files and tokens, and frees its login and address', async () => {
      const gone = await api.createUser('leaving');
      const folder = await api.defaultFolder(gone, 'Private');
      const itemId = await api.newItem(gone, folder, 'notes');
      const other = await api.as(ben).delete(`/user/${gone._id}`);
      expect([other.status, other.body]).toEqual([
        403,
        { message: `Admin access denied for user ${gone._id} (user ${ben._id}).`, type: 'access' },
      ]);
      const res = await api.as(gone).delete(`/user/${gone._id}`);
      expect([res.status, res.body]).toEqual([200, { message: 'Deleted user leaving.' }]);
      expect((await api.as(admin).get(`/user/${gone._id}`)).body).toEqual({
        message: `Invalid user id (${gone._id}).`,
        type: 'rest',
      });
      expect((await api.as(admin).get(`/folder/${folder}`)).status).toBe(400);
      expect((await api.as(admin).get(`/item/${itemId}`)).status).toBe(400);
      expect((await api.as(gone).get('/user/me')).body).toBeNull();
      expect(await streamTypes(gone._id)).toEqual(['UserRegistered', 'UserDeleted']);
      const again = await api.createUser('leaving');
      expect(again._id).not.toBe(gone._id);
    });
  });
});
