import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

describe('groups', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  const createGroup = async (user: TestUser, name: string, extra: Record<string, string> = {}) => {
    const res = await api.as(user).post('/group').type('form').send({ name, ...extra });
    if (res.status !== 200) throw new Error(`POST /group: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body._id as string;
  };
  const privateFolderOf = async (user: TestUser) => {
    const res = await api.as(user).get('/folder').query({ parentType: 'user', parentId: user._id, name: 'Private' });
    return res.body[0]._id as string;
  };

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice', { firstName: 'Alice', lastName: 'Liddell' });
    bob = await api.createUser('bobby', { firstName: 'Bob', lastName: 'Builder' });
    carol = await api.createUser('carol', { firstName: 'Carol', lastName: 'Danvers' });
  });
  afterAll(() => api.close());

  describe('POST /group', () => {
    it('creates a group whose creator is its administrator', async () => {
      const res = await api.as(alice).post('/group').type('form').send({ name: '  Readers ', description: ' people who read ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        _id: expect.any(String), _modelType: 'group', _accessLevel: 2, name: 'Readers', description: 'people who read',
        public: false, created: expect.any(String), updated: expect.any(String), addAllowed: 'default',
      });
      const access = await api.as(alice).get(`/group/${res.body._id}/access`);
      expect(access.body.access).toEqual({ users: [{ id: alice._id, login: 'alice', name: 'Alice Liddell', level: 2, flags: [] }], groups: [] });
      expect(access.body.requests).toEqual([]);
      const me = await api.as(alice).get('/user/me');
      expect(me.body.groups).toContain(res.body._id);
    });

    it('refuses anonymous callers, empty names and names already taken (in any case)', async () => {
      const anonymous = await api.anonymous().post('/group').type('form').send({ name: 'x' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
      const empty = await api.as(alice).post('/group').type('form').send({ name: '   ' });
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual({ message: 'Group name must not be empty.', type: 'validation', field: 'name' });
      await createGroup(alice, 'Unique');
      const taken = await api.as(bob).post('/group').type('form').send({ name: 'UNIQUE' });
      expect(taken.status).toBe(400);
      expect(taken.body).toEqual({ message: 'A group with that name already exists.', type: 'validation', field: 'name' });
    });
  });

  describe('reading', () => {
    it('lists public groups to everyone and private ones to members, invitees and site admins', async () => {
      const open = await createGroup(alice, 'Open club', { public: 'true' });
      const closed = await createGroup(alice, 'Closed club');
      const names = async (user: TestUser | null) => (await api.as(user).get('/group').query({ text: 'club' })).body.map((g: { name: string }) => g.name);
      expect(await names(null)).toEqual(['Open club']);
      expect(await names(bob)).toEqual(['Open club']);
      expect(await names(alice)).toEqual(['Closed club', 'Open club']);
      expect(await names(admin)).toEqual(['Closed club', 'Open club']);
      const denied = await api.as(bob).get(`/group/${closed}`);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ message: `Read access denied for group ${closed} (user ${bob._id}).`, type: 'access' });
      const anonymous = await api.anonymous().get(`/group/${closed}`);
      expect(anonymous.status).toBe(401);
      const visible = await api.as(bob).get(`/group/${open}`);
      expect(visible.status).toBe(200);
      expect(visible.body._addToGroupPolicy).toBe('never');
      expect(visible.body._accessLevel).toBe(0);
      const exact = await api.anonymous().get('/group').query({ text: 'open club', exact: 'true' });
      expect(exact.body).toEqual([]);
      const bad = await api.anonymous().get('/group/nope');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ message: 'Invalid group id (nope).', type: 'rest' });
    });
  });

  describe('membership', () => {
    let team: string;
    beforeAll(async () => {
      team = await createGroup(alice, 'Team');
    });

    it('invites a user, who sees the group and joins at the invited level', async () => {
      const invited = await api.as(alice).post(`/group/${team}/invitation`).type('form').send({ userId: bob._id, level: '1' });
      expect(invited.status).toBe(200);
      const bobMe = await api.as(bob).get('/user/me');
      expect(bobMe.body.groupInvites).toEqual([{ groupId: team, level: 1 }]);
      expect(bobMe.body.groups).toEqual([]);
      expect((await api.as(bob).get(`/group/${team}`)).status).toBe(200);
      const invitations = await api.as(alice).get(`/group/${team}/invitation`);
      expect(invitations.body.map((u: { login: string }) => u.login)).toEqual(['bobby']);
      const joined = await api.as(bob).post(`/group/${team}/member`);
      expect(joined.status).toBe(200);
      expect(joined.body.access.users.map((u: { login: string; level: number }) => [u.login, u.level])).toEqual([['alice', 2], ['bobby', 1]]);
      const members = await api.anonymous().get(`/group/${team}/member`);
      expect(members.status).toBe(401);
      const listed = await api.as(bob).get(`/group/${team}/member`);
      expect(listed.headers['girder-total-count']).toBe('2');
      expect(listed.body.map((u: { login: string }) => u.login)).toEqual(['bobby', 'alice']);
      const again = await api.as(alice).post(`/group/${team}/invitation`).type('form').send({ userId: bob._id });
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ message: 'User is already in this group.', type: 'validation' });
    });

    it('turns a request to join into membership when a moderator accepts it', async () => {
      const requested = await api.as(carol).post(`/group/${team}/member`);
      // Carol cannot read the private group she is not invited to.
      expect(requested.status).toBe(403);
      expect(requested.body.message).toBe(`Read access denied for group ${team} (user ${carol._id}).`);
      const open = await createGroup(alice, 'Open door', { public: 'true' });
      const request = await api.as(carol).post(`/group/${open}/member`);
      expect(request.body.requests).toEqual([{ id: carol._id, login: 'carol', name: 'Carol Danvers' }]);
      expect(request.body.access.users.map((u: { login: string }) => u.login)).toEqual(['alice']);
      const accepted = await api.as(alice).post(`/group/${open}/invitation`).type('form').send({ userId: carol._id });
      expect(accepted.body.requests).toEqual([]);
      expect(accepted.body.access.users.map((u: { login: string }) => u.login)).toEqual(['alice', 'carol']);
    });

    it('lets only those with the level invite at it, and only admins force-add', async () => {
      // Bob is a moderator (WRITE): he may invite at READ and WRITE, not ADMIN.
      const tooHigh = await api.as(bob).post(`/group/${team}/invitation`).type('form').send({ userId: carol._id, level: '2' });
      expect(tooHigh.status).toBe(403);
      expect(tooHigh.body).toEqual({ message: `Admin access denied for group ${team} (user ${bob._id}).`, type: 'access' });
      const forced = await api.as(bob).post(`/group/${team}/invitation`).type('form').send({ userId: carol._id, force: 'true' });
      expect(forced.status).toBe(403);
      expect(forced.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      const badLevel = await api.as(alice).post(`/group/${team}/invitation`).type('form').send({ userId: carol._id, level: '7' });
      expect(badLevel.status).toBe(400);
      expect(badLevel.body).toEqual({ message: 'Invalid access level', type: 'rest' });
      const noUser = await api.as(alice).post(`/group/${team}/invitation`).type('form').send({});
      expect(noUser.body).toEqual({ message: "Parameter 'userId' is required.", type: 'rest' });
      const added = await api.as(admin).post(`/group/${team}/invitation`).type('form').send({ userId: carol._id, force: 'true' });
      expect(added.body.access.users.map((u: { login: string }) => u.login)).toEqual(['alice', 'bobby', 'carol']);
    });

    it('promotes and demotes members; only members can be promoted', async () => {
      const promoted = await api.as(alice).post(`/group/${team}/admin`).type('form').send({ userId: carol._id });
      expect(promoted.status).toBe(200);
      expect(promoted.body.access.users.find((u: { login: string }) => u.login === 'carol').level).toBe(2);
      expect(promoted.body.requests).toBeUndefined();
      const demoted = await api.as(alice).delete(`/group/${team}/admin`).query({ userId: carol._id });
      expect(demoted.body.access.users.find((u: { login: string }) => u.login === 'carol').level).toBe(0);
      const byModerator = await api.as(bob).post(`/group/${team}/moderator`).type('form').send({ userId: carol._id });
      expect(byModerator.status).toBe(403);
      expect(byModerator.body.message).toBe(`Admin access denied for group ${team} (user ${bob._id}).`);
      const outsider = await api.createUser('dave');
      const notMember = await api.as(alice).post(`/group/${team}/moderator`).type('form').send({ userId: outsider._id });
      expect(notMember.status).toBe(403);
      expect(notMember.body).toEqual({ message: 'That user is not a group member.', type: 'access' });
    });

    it('grants a folder to the group: members read it, and lose it once removed', async () => {
      const folder = await privateFolderOf(alice);
      const grant = await api.as(alice).put(`/folder/${folder}/access`).type('form')
        .send({ access: JSON.stringify({ users: [{ id: alice._id, level: 2 }], groups: [{ id: team, level: 0 }] }) });
      expect(grant.status).toBe(200);
      const acl = await api.as(alice).get(`/folder/${folder}/access`);
      expect(acl.body.groups).toEqual([{ id: team, level: 0, flags: [], name: 'Team', description: '' }]);
      expect((await api.as(carol).get(`/folder/${folder}`)).status).toBe(200);
      const listed = await api.as(carol).get('/folder').query({ parentType: 'user', parentId: alice._id });
      expect(listed.body.map((f: { name: string }) => f.name)).toEqual(['Private', 'Public']);
      // Removing someone else needs WRITE (Bob is a moderator), and ADMIN to remove an administrator.
      const removeAdmin = await api.as(bob).delete(`/group/${team}/member`).query({ userId: alice._id });
      expect(removeAdmin.status).toBe(403);
      expect(removeAdmin.body.message).toBe(`Admin access denied for group ${team} (user ${bob._id}).`);
      const removed = await api.as(bob).delete(`/group/${team}/member`).query({ userId: carol._id });
      expect(removed.status).toBe(200);
      expect(removed.body.access.users.map((u: { login: string }) => u.login)).toEqual(['alice', 'bobby']);
      const lost = await api.as(carol).get(`/folder/${folder}`);
      expect(lost.status).toBe(403);
      expect(lost.body).toEqual({ message: `Read access denied for folder ${folder} (user ${carol._id}).`, type: 'access' });
      const relisted = await api.as(carol).get('/folder').query({ parentType: 'user', parentId: alice._id });
      expect(relisted.body.map((f: { name: string }) => f.name)).toEqual(['Public']);
      // Leaving by oneself needs no level.
      const left = await api.as(bob).delete(`/group/${team}/member`);
      expect(left.status).toBe(200);
      expect((await api.as(bob).get(`/folder/${folder}`)).status).toBe(403);
    });
  });

  describe('PUT and DELETE /group/:id', () => {
    it('updates with WRITE, sets addAllowed as site admin only, and deletes with ADMIN', async () => {
      const id = await createGroup(alice, 'Renamable');
      await api.as(admin).post(`/group/${id}/invitation`).type('form').send({ userId: bob._id, force: 'true' });
      const byMember = await api.as(bob).put(`/group/${id}`).type('form').send({ name: 'Nope' });
      expect(byMember.status).toBe(403);
      expect(byMember.body.message).toBe(`Write access denied for group ${id} (user ${bob._id}).`);
      const renamed = await api.as(alice).put(`/group/${id}`).type('form').send({ name: 'Renamed', public: 'true' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ name: 'Renamed', public: true });
      const addAllowed = await api.as(alice).put(`/group/${id}`).type('form').send({ addAllowed: 'yesmod' });
      expect(addAllowed.status).toBe(403);
      expect(addAllowed.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      // The old name is free again.
      await createGroup(carol, 'Renamable');
      const notAdmin = await api.as(bob).delete(`/group/${id}`);
      expect(notAdmin.status).toBe(403);
      const deleted = await api.as(alice).delete(`/group/${id}`);
      expect(deleted.body).toEqual({ message: 'Deleted the group Renamed.' });
      expect((await api.as(alice).get(`/group/${id}`)).body).toEqual({ message: `Invalid group id (${id}).`, type: 'rest' });
      expect((await api.as(bob).get('/user/me')).body.groups).not.toContain(id);
    });
  });
});
