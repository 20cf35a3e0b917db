import crypto from 'node:crypto';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';

/**
 * An HOTP of the test's own (RFC 4226 section 5.3), independent of the service's: the codes the service must accept
 * are computed here from the key its `totpUri` hands out.
 */
function base32(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let value = 0;
  let bits = 0;
  const out: number[] = [];
  for (const char of text) {
    value = (value << 5) | alphabet.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
function hotp(secret: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeUInt32BE(Math.floor(counter / 2 ** 32), 0);
  message.writeUInt32BE(counter % 2 ** 32, 4);
  const h = crypto.createHmac('sha1', secret).update(message).digest();
  const offset = h[19] & 0xf;
  const binary = ((h[offset] & 0x7f) << 24) | (h[offset + 1] << 16) | (h[offset + 2] << 8) | h[offset + 3];
  return (binary % 1_000_000).toString().padStart(6, '0');
}
const totp = (key: string, atMs = Date.now()) => hotp(base32(key), Math.floor(atMs / 30_000));

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

describe('two-factor login (TOTP)', () => {
  let api: ApiClient;
  let admin: TestUser;
  let ann: TestUser;
  let ben: TestUser;
  beforeAll(async () => {
    // Only the clock is under the test's control (codes are per 30-second step); timers stay real.
    jest.useFakeTimers({
      now: Date.now(),
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    api = await startApi();
    admin = await api.createUser('admin');
    ann = await api.createUser('annie');
    ben = await api.createUser('benny');
  });
  afterAll(async () => {
    await api.close();
    jest.useRealTimers();
  });
  const nextStep = () => jest.setSystemTime(Date.now() + 30_000);
  const login = (name: string, otp?: string) => {
    const req = api.anonymous().get('/user/authentication').set('Authorization', basic(name, 'password1'));
    return otp === undefined ? req : req.set('Girder-OTP', otp);
  };
  const denied = (message: string) => ({ message, type: 'access' });

  it('computes the RFC 4226 test vectors with the test’s own HOTP', () => {
    const secret = Buffer.from('12345678901234567890');
    expect([0, 1, 2, 9].map((c) => hotp(secret, c))).toEqual(['755224', '287082', '359152', '520489']);
  });

  it('starts, finishes and requires one-time passwords, and removes them', async () => {
    const started = await api.as(ann).post(`/user/${ann._id}/otp`);
    expect(started.status).toBe(200);
    const uri = started.body.totpUri as string;
    expect(uri).toMatch(/^otpauth:\/\/totp\/127\.0\.0\.1:annie\?secret=[A-Z2-7]{32}&issuer=127\.0\.0\.1$/);
    // Started again before finishing: a new key replaces the first.
    const restarted = (await api.as(ann).post(`/user/${ann._id}/otp`)).body.totpUri as string;
    expect(restarted).not.toBe(uri);
    const key = /secret=([A-Z2-7]+)/.exec(restarted)![1];
    expect((await api.as(ann).get('/user/me')).body.otp).toBe(false);
    // Not required until finished.
    expect((await login('annie')).status).toBe(200);

    const noHeader = await api.as(ann).put(`/user/${ann._id}/otp`);
    expect([noHeader.status, noHeader.body]).toEqual([
      400,
      { message: 'The "Girder-OTP" header must be provided.', type: 'rest' },
    ]);
    // A code of no step near now (so no window can accept it).
    const near = [-30_000, 0, 30_000, 60_000].map((d) => totp(key, Date.now() + d));
    let wrongCode = '000000';
    while (near.includes(wrongCode)) wrongCode = String(Number(wrongCode) + 1).padStart(6, '0');
    const wrong = await api.as(ann).put(`/user/${ann._id}/otp`).set('Girder-OTP', wrongCode);
    expect([wrong.status, wrong.body]).toEqual([
      403,
      denied('One-time password validation failed: Token did not match'),
    ]);
    const finished = await api.as(ann).put(`/user/${ann._id}/otp`).set('Girder-OTP', totp(key));
    expect([finished.status, finished.body]).toEqual([200, null]);
    expect((await api.as(ann).get('/user/me')).body.otp).toBe(true);
    const twice = await api.as(ann).post(`/user/${ann._id}/otp`);
    expect([twice.status, twice.body]).toEqual([
      400,
      { message: 'The user has already enabled one-time passwords.', type: 'rest' },
    ]);

    const without = await login('annie');
    expect([without.status, without.body]).toEqual([
      401,
      denied('User authentication must include a one-time password (typically in the "Girder-OTP" header).'),
    ]);
    expect((await login('annie', wrongCode)).body).toEqual(
      denied('One-time password validation failed: Token did not match'),
    );
    // The step the code was accepted in is used up: the next code is good from the next step on.
    const sameStep = await login('annie', totp(key));
    expect([sameStep.status, sameStep.body]).toEqual([
      401,
      denied('One-time password validation failed: Token has already been used, please wait for another.'),
    ]);
    nextStep();
    const good = await login('annie', totp(key));
    expect(good.status).toBe(200);
    expect(good.body.user).toMatchObject({ login: 'annie', otp: true });
    // A code of the step before or after is accepted too (clocks a little apart).
    nextStep();
    expect((await login('annie', totp(key, Date.now() - 30_000))).status).toBe(200);
    nextStep();
    expect((await login('annie', totp(key, Date.now() + 30_000))).status).toBe(200);
    nextStep();
    expect((await login('annie', totp(key, Date.now() + 60_000))).status).toBe(401);

    const removed = await api.as(ann).delete(`/user/${ann._id}/otp`);
    expect([removed.status, removed.body]).toEqual([200, null]);
    expect((await login('annie')).status).toBe(200);
    const again = await api.as(ann).delete(`/user/${ann._id}/otp`);
    expect([again.status, again.body]).toEqual([
      400,
      { message: 'The user has not enabled one-time passwords.', type: 'rest' },
    ]);
    const types: string[] = [];
    for await (const event of api.runtime.services.eventStore.readStream(`user-${ann._id}`)) types.push(event.type);
    expect(types).toEqual(['UserRegistered', 'UserOtpStarted', 'UserOtpStarted', 'UserOtpEnabled', 'UserOtpRemoved']);
    // The administrators' event stream shows the changes, never the key.
    const listener = await api.listen();
    const stream = listener.sse('/events?since=0', { 'Girder-Token': admin.token });
    await stream.waitFor((events) => events.some((e) => e.event === 'UserOtpRemoved'));
    stream.close();
    const startedEvents = stream.events.filter((e) => e.event === 'UserOtpStarted');
    expect(startedEvents.map((e) => (e.json as { data: unknown }).data)).toEqual([
      { userId: ann._id },
      { userId: ann._id },
    ]);
    expect(stream.body).not.toContain(key);
  });

  it('refuses a code from a user who has none, and finishing what was never started', async () => {
    const res = await login('benny', '123456');
    expect([res.status, res.body]).toEqual([401, denied('The user has not enabled one-time passwords.')]);
    const finish = await api.as(ben).put(`/user/${ben._id}/otp`).set('Girder-OTP', '123456');
    expect([finish.status, finish.body]).toEqual([
      400,
      { message: 'The user has not initialized one-time passwords.', type: 'rest' },
    ]);
  });

  it('is the user’s own or a site administrator’s to manage', async () => {
    const other = await api.as(ben).post(`/user/${ann._id}/otp`);
    expect([other.status, other.body]).toEqual([
      403,
      denied(`Admin access denied for user ${ann._id} (user ${ben._id}).`),
    ]);
    expect((await api.anonymous().post(`/user/${ann._id}/otp`)).body).toEqual(denied('You must be logged in.'));
    expect((await api.as(admin).post(`/user/${ben._id}/otp`)).status).toBe(200);
  });

  it('names the brand as the issuer once one is set', async () => {
    const set = await api
      .as(admin)
      .put('/system/setting')
      .type('form')
      .send({ key: 'core.brand_name', value: 'Data Lake' });
    expect(set.status).toBe(200);
    const uri = (await api.as(admin).post(`/user/${admin._id}/otp`)).body.totpUri as string;
    expect(uri).toMatch(/^otpauth:\/\/totp\/Data%20Lake:admin\?secret=[A-Z2-7]{32}&issuer=Data%20Lake$/);
  });
});
