import { ApiClient, startApi, type TestUser } from '../support/apiClient';
import { SmtpSink, type ReceivedMail } from '../support/smtpSink';

const HOST = 'https://data.example.org';
const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
const linkToken = (mail: ReceivedMail, kind: 'token' | 'verification') => {
  const match = new RegExp(`#useraccount/([0-9a-f]{24})/${kind}/([A-Za-z0-9]+)`).exec(mail.html);
  if (!match) throw new Error(`no ${kind} link in ${mail.html}`);
  return { userId: match[1], token: match[2] };
};

/** Girder's mail frame (_header.mako, _footer.mako) around a body. */
const framed = (body: string) => `<div style="background-color: #3f3b3b; color: white; padding: 10px;\
            margin-bottom: 15px; font-family: Arial, sans-serif; font-size: 16px;\
            font-weight: bold;">Folder Service</div>

${body}

<div style="margin-top: 15px; border-top: 1px solid #e0e0e0; color: #999;\
            padding-top: 6px;">
  This auto-generated email sent from Folder Service @ <a target="_blank" href="${HOST}">${HOST}</a>.
</div>`;

describe('account e-mail over SMTP', () => {
  let api: ApiClient;
  let smtp: SmtpSink;
  let admin: TestUser;
  beforeAll(async () => {
    api = await startApi();
    smtp = await SmtpSink.start();
    admin = await api.createUser('admin');
    await smtp.configure(api, admin);
    await setting('core.email_host', HOST);
  });
  afterAll(async () => {
    await api.close();
    await smtp.close();
  });

  async function setting(key: string, value: string) {
    const res = await api.as(admin).put('/system/setting').type('form').send({ key, value });
    expect(res.status).toBe(200);
  }
  const login = (name: string, password: string) =>
    api.anonymous().get('/user/authentication').set('Authorization', basic(name, password));

  describe('password reset: temporary access', () => {
    let alice: TestUser;
    beforeAll(async () => {
      alice = await api.createUser('alice');
    });

    it('mails a one-day link whose token logs in once and stands in for the old password', async () => {
      const sent = await api
        .anonymous()
        .put('/user/password/temporary')
        .type('form')
        .send({ email: ' ALICE@example.com ' });
      expect([sent.status, sent.body]).toEqual([200, { message: 'Sent temporary access email.' }]);
      const mail = await smtp.next('ALICE@example.com');
      const { userId, token } = linkToken(mail, 'token');
      const url = `${HOST}#useraccount/${alice._id}/token/${token}`;
      expect(userId).toBe(alice._id);
      expect(mail).toMatchObject({
        from: 'no-reply@example.com',
        subject: 'Folder Service: Temporary access',
        fromHeader: 'Folder Service <no-reply@example.com>',
        toHeader: 'ALICE@example.com',
      });
      expect(mail.contentType).toMatch(/^text\/html; charset=utf-8/i);
      expect(mail.html).toBe(
        framed(`<p>
A temporary access token was requested on your behalf.  You can access the
Folder Service system at
<a href="${url}">${url}</a>.
Once you access the system, you will have the option to update your password.
</p>

<p>
If you did not initiate this temporary access request, you can ignore this
email.  Temporary access is only available with the link provided and expires
24 hours after it was requested.
</p>`),
      );

      const checked = await api.anonymous().get(`/user/password/temporary/${alice._id}`).query({ token });
      expect(checked.status).toBe(200);
      expect(checked.body).toMatchObject({
        user: { _id: alice._id, login: 'alice', email: 'alice@example.com' },
        authToken: { temporary: true },
        message: 'Temporary access token is valid.',
      });
      expect(checked.headers['set-cookie']?.[0]).toMatch(/^serviceToken=/);
      const session = checked.body.authToken.token as string;
      const changed = await api
        .as(session)
        .put('/user/password')
        .type('form')
        .send({ old: token, new: 'fresh-password' });
      expect([changed.status, changed.body]).toEqual([200, { message: 'Password changed.' }]);
      expect((await login('alice', 'fresh-password')).status).toBe(200);
      expect((await login('alice', 'password1')).status).toBe(401);
      // Used up by the change.
      const again = await api.anonymous().get(`/user/password/temporary/${alice._id}`).query({ token });
      expect([again.status, again.body]).toEqual([
        401,
        { message: 'The token does not grant temporary access to this user.', type: 'access' },
      ]);
    });

    it('refuses an address nobody registered, another user, an unknown user and a login token', async () => {
      const unknown = await api
        .anonymous()
        .put('/user/password/temporary')
        .type('form')
        .send({ email: 'no@example.com' });
      expect([unknown.status, unknown.body]).toEqual([400, { message: 'That email is not registered.', type: 'rest' }]);
      await api.anonymous().put('/user/password/temporary').type('form').send({ email: 'alice@example.com' });
      const { token } = linkToken(await smtp.next('alice@example.com'), 'token');
      const other = await api.anonymous().get(`/user/password/temporary/${admin._id}`).query({ token });
      expect([other.status, other.body]).toEqual([
        401,
        { message: 'The token does not grant temporary access to this user.', type: 'access' },
      ]);
      const loginToken = await api
        .anonymous()
        .get(`/user/password/temporary/${alice._id}`)
        .query({ token: alice.token });
      // A login token in `token` also logs its holder in: the refusal is then a 403.
      expect(loginToken.status).toBe(403);
      const noUser = await api.anonymous().get('/user/password/temporary/nope').query({ token });
      expect([noUser.status, noUser.body]).toEqual([400, { message: 'Invalid user id (nope).', type: 'rest' }]);
      const noToken = await api.anonymous().get(`/user/password/temporary/${alice._id}`);
      expect([noToken.status, noToken.body]).toEqual([
        400,
        { message: "Parameter 'token' is required.", type: 'rest' },
      ]);
    });
  });

  describe('e-mail verification', () => {
    afterAll(() => setting('core.email_verification', 'disabled'));

    it('required: registration mails a link, login waits for it, the link verifies and logs in once', async () => {
      await setting('core.email_verification', 'required');
      const registered = await api
        .anonymous()
        .post('/user')
        .type('form')
        .send({ login: 'bobby', email: 'bob@example.com', firstName: 'Bob', lastName: 'B', password: 'password1' });
      expect(registered.status).toBe(200);
      expect(registered.body).not.toHaveProperty('authToken');
      expect(registered.body).toMatchObject({ login: 'bobby', emailVerified: false, status: 'enabled' });
      const first = await smtp.next('bob@example.com');
      expect(first.subject).toBe('Folder Service: Email verification');
      const { userId, token } = linkToken(first, 'verification');
      const url = `${HOST}#useraccount/${userId}/verification/${token}`;
      expect(first.html).toBe(
        framed(`<p>Please verify your email address by clicking this link:</p>

<p><a href="${url}">${url}</a></p>

<p>If you did not initiate this request, you can ignore this email.
The link provided expires 24 hours after it was requested.</p>`),
      );
      const refused = await login('bobby', 'password1');
      expect([refused.status, refused.body]).toEqual([
        401,
        { message: 'Email verification required.', type: 'access', extra: 'emailVerification' },
      ]);

      const resent = await api.anonymous().post('/user/verification').type('form').send({ login: ' BOBBY ' });
      expect([resent.status, resent.body]).toEqual([200, { message: 'Sent verification email.' }]);
      const second = linkToken(await smtp.next('bob@example.com'), 'verification');
      const byEmail = await api.anonymous().post('/user/verification').type('form').send({ login: 'bob@example.com' });
      expect(byEmail.status).toBe(200);
      await smtp.next('bob@example.com');

      const bad = await api
        .anonymous()
        .put(`/user/${userId}/verification`)
        .type('form')
        .send({ token: 'x'.repeat(64) });
      expect([bad.status, bad.body]).toEqual([401, { message: 'The token is invalid or expired.', type: 'access' }]);
      const verified = await api
        .anonymous()
        .put(`/user/${userId}/verification`)
        .type('form')
        .send({ token: second.token });
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({
        user: { _id: userId, emailVerified: true },
        authToken: { scope: ['core.user_auth'] },
        message: 'Email verification succeeded.',
      });
      const me = await api.as(verified.body.authToken.token as string).get('/user/me');
      expect(me.body.login).toBe('bobby');
      const reused = await api
        .anonymous()
        .put(`/user/${userId}/verification`)
        .type('form')
        .send({ token: second.token });
      expect(reused.status).toBe(401);
      expect((await login('bobby', 'password1')).status).toBe(200);
      const types: string[] = [];
      for await (const event of api.runtime.services.eventStore.readStream(`user-${userId}`)) types.push(event.type);
      expect(types).toEqual(['UserRegistered', 'UserEmailVerified']);
    });

    it('optional: registration mails a link and logs the registrant in', async () => {
      await setting('core.email_verification', 'optional');
      const registered = await api
        .anonymous()
        .post('/user')
        .type('form')
        .send({ login: 'olga', email: 'olga@example.com', firstName: 'Olga', lastName: 'O', password: 'password1' });
      expect(registered.body.authToken.token).toEqual(expect.any(String));
      expect((await smtp.next('olga@example.com')).subject).toBe('Folder Service: Email verification');
    });

    it('refuses a login nobody registered', async () => {
      const res = await api.anonymous().post('/user/verification').type('form').send({ login: 'nobody' });
      expect([res.status, res.body]).toEqual([401, { message: 'That login is not registered.', type: 'rest' }]);
    });
  });

  describe('group invitations', () => {
    it('tells an invited user, unless quiet or added by force', async () => {
      const group = await api.as(admin).post('/group').type('form').send({ name: 'Lab <1>' });
      expect(group.status).toBe(200);
      const groupId = group.body._id as string;
      const [quiet, forced, told] = await Promise.all([
        api.createUser('quietly'),
        api.createUser('forced'),
        api.createUser('toldone', { firstName: 'Tess' }),
      ]);
      const invite = (user: TestUser, extra: Record<string, string> = {}) =>
        api
          .as(admin)
          .post(`/group/${groupId}/invitation`)
          .type('form')
          .send({ userId: user._id, ...extra });
      expect((await invite(quiet, { quiet: 'true' })).status).toBe(200);
      expect((await invite(forced, { force: 'true' })).status).toBe(200);
      expect((await invite(told)).status).toBe(200);
      const mail = await smtp.next('toldone@example.com');
      expect(mail.subject).toBe("Folder Service: You've been invited to a group");
      expect(mail.html).toBe(
        framed(`<p>Hello Tess,</p>

<p>
<b>First Last (admin)</b> has invited
you to join the <b>Lab &lt;1&gt;</b> group! To join the group,
<a href="${HOST}#group/${groupId}">click here</a> and then click
"Join group".
</p>`),
      );
      // Their sends would have begun before this one's: a little more time, and nothing came for them.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(smtp.received.filter((m) => m.to.some((to) => /^(quietly|forced)@/.test(to)))).toEqual([]);
    });
  });

  describe('registration policy approve', () => {
    afterAll(() => setting('core.registration_policy', 'open'));

    it('holds new accounts until an administrator enables them, with a notice each way', async () => {
      await setting('core.registration_policy', 'approve');
      const registered = await api.anonymous().post('/user').type('form').send({
        login: 'carol',
        email: 'carol@example.com',
        firstName: '<b>Carol</b>',
        lastName: 'C',
        password: 'password1',
      });
      expect(registered.status).toBe(200);
      expect(registered.body).not.toHaveProperty('authToken');
      expect(registered.body.status).toBe('pending');
      const carolId = registered.body._id as string;
      const notice = await smtp.next('admin@example.com');
      expect(notice.subject).toBe('Folder Service: Account pending approval');
      const url = `${HOST}#user/${carolId}`;
      expect(notice.html).toBe(
        framed(`<p>Someone has registered a new account that needs admin approval.</p>

<p>Login: carol</p>
<p>Email: carol@example.com</p>
<p>Name: &lt;b&gt;Carol&lt;/b&gt; C</p>

<p><a href="${url}">${url}</a></p>`),
      );
      const waiting = await login('carol', 'password1');
      expect([waiting.status, waiting.body]).toEqual([
        401,
        { message: 'Account approval required.', type: 'access', extra: 'accountApproval' },
      ]);
      const approved = await api
        .as(admin)
        .put(`/user/${carolId}`)
        .type('form')
        .send({ firstName: 'Carol', lastName: 'C', email: 'carol@example.com', status: 'enabled' });
      expect([approved.status, approved.body.status]).toEqual([200, 'enabled']);
      const told = await smtp.next('carol@example.com');
      expect(told.subject).toBe('Folder Service: Account approved');
      expect(told.html).toBe(
        framed(`<p>Your account has been approved. You may now login.</p>

<p><a href="${HOST}">${HOST}</a></p>`),
      );
      expect((await login('carol', 'password1')).status).toBe(200);
    });

    it('lets an administrator create accounts that need no approval', async () => {
      await setting('core.registration_policy', 'approve');
      const created = await api.as(admin).post('/user').type('form').send({
        login: 'dave',
        email: 'dave@example.com',
        firstName: 'Dave',
        lastName: 'D',
        password: 'password1',
        admin: 'true',
      });
      expect([created.status, created.body.status]).toEqual([200, 'enabled']);
      expect((await login('dave', 'password1')).status).toBe(200);
    });
  });
});
