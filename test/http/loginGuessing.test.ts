import http from 'node:http';
import { startApi, API_PREFIX, type ApiClient, type Listener, type TestUser } from '../support/apiClient';
import { passwordKdf } from '../../src/domain/password';

/**
 * Rule 5 of issue 27, logins: a password check costs the same whether the login exists or not, and failures are
 * throttled per account and per client address with a growing wait, answered 429 with Retry-After (docs/security.md,
 * "Logins and guessing"). Three free failures and a first wait of one second keep the test short; each scenario
 * speaks from loopback addresses of its own (127.0.0.x), so the address counts of one do not reach another.
 */
const FREE_FAILURES = 3;

let api: ApiClient;
let listener: Listener;
let dave: TestUser;

beforeAll(async () => {
  api = await startApi({ LOGIN_FREE_FAILURES: String(FREE_FAILURES), LOGIN_DELAY_MS: '1000' });
  await api.createUser('admin');
  for (const login of ['alice', 'bobby', 'carol']) await api.createUser(login);
  dave = await api.createUser('david');
  listener = await api.listen();
});
afterAll(async () => {
  await listener?.close();
  await api?.close();
});

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: unknown;
}

/** One request from the loopback address `from`. */
function send(from: string, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: listener.port, localAddress: from, method, path: `${API_PREFIX}${path}`, headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'],
            body: text ? JSON.parse(text) : null,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const login = (from: string, name: string, password: string) =>
  send(from, 'GET', '/user/authentication', {
    Authorization: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`,
  });

const failed = { status: 401, retryAfter: undefined, body: { message: 'Login failed.', type: 'access' } };
const waitFor = (seconds: number) => ({
  status: 429,
  retryAfter: String(seconds),
  body: {
    message: `Too many failed password attempts. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
    type: 'rest',
  },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('password guessing', () => {
  it('a login that failed too often waits, from any address and with any password; each failure doubles the wait; a success resets it', async () => {
    for (let i = 0; i < FREE_FAILURES; i++) expect(await login('127.0.0.11', 'alice', 'wrong-pass')).toEqual(failed);
    // The right password, from another address: the account waits.
    expect(await login('127.0.0.12', 'alice', 'password1')).toEqual(waitFor(1));
    await sleep(1100);
    expect(await login('127.0.0.12', 'alice', 'wrong-pass')).toEqual(failed);
    expect(await login('127.0.0.13', 'alice', 'password1')).toEqual(waitFor(2));
    await sleep(2100);
    expect((await login('127.0.0.13', 'alice', 'password1')).status).toBe(200);
    // Counting starts afresh after the success.
    for (let i = 0; i < FREE_FAILURES - 1; i++)
      expect(await login('127.0.0.14', 'alice', 'wrong-pass')).toEqual(failed);
    expect((await login('127.0.0.14', 'alice', 'password1')).status).toBe(200);
  });

  it('an address that failed too often waits for every login; another address does not', async () => {
    expect(await login('127.0.0.21', 'nobody1', 'password1')).toEqual(failed);
    expect(await login('127.0.0.21', 'nobody2@example.com', 'password1')).toEqual(failed);
    expect(await login('127.0.0.21', 'bobby', 'wrong-pass')).toEqual(failed);
    expect(await login('127.0.0.21', 'bobby', 'password1')).toEqual(waitFor(1));
    expect(await login('127.0.0.21', 'carol', 'password1')).toEqual(waitFor(1));
    expect((await login('127.0.0.22', 'carol', 'password1')).status).toBe(200);
    expect((await login('127.0.0.22', 'bobby', 'password1')).status).toBe(200);
  });

  it('an unknown login is throttled exactly like a known one (the answers do not tell which logins exist)', async () => {
    const answers = async (name: string, first: number) => {
      const seen: Answer[] = [];
      for (let i = 0; i <= FREE_FAILURES; i++) seen.push(await login(`127.0.0.${first + i}`, name, 'wrong-pass'));
      return seen;
    };
    const unknown = await answers('ghost', 31);
    expect(unknown).toEqual([...Array<Answer>(FREE_FAILURES).fill(failed), waitFor(1)]);
    expect(await answers('carol', 41)).toEqual(unknown);
  });

  it('an unknown login runs the key derivation once, with the parameters of a real hash, as a wrong password does', async () => {
    const derive = jest.spyOn(passwordKdf, 'derive');
    try {
      expect(await login('127.0.0.51', 'ghost-two', 'some-password')).toEqual(failed);
      const unknownCalls = derive.mock.calls.map(([, salt, keyLength, options]) => [salt.length, keyLength, options]);
      derive.mockClear();
      expect(await login('127.0.0.52', 'bobby', 'some-password')).toEqual(failed);
      const knownCalls = derive.mock.calls.map(([, salt, keyLength, options]) => [salt.length, keyLength, options]);
      expect(unknownCalls).toEqual([[16, 64, { N: 16384, r: 8, p: 1 }]]);
      expect(unknownCalls).toEqual(knownCalls);
    } finally {
      derive.mockRestore();
    }
  });

  it('a wrong old password on PUT /user/password counts as a failure of the account', async () => {
    const change = (old: string) =>
      send('127.0.0.61', 'PUT', `/user/password?old=${old}&new=another1`, { 'Service-Token': dave.token });
    for (let i = 0; i < FREE_FAILURES; i++) {
      expect(await change('wrong-pass')).toEqual({
        status: 403,
        retryAfter: undefined,
        body: { message: 'Old password is incorrect.', type: 'access' },
      });
    }
    expect(await change('password1')).toEqual(waitFor(1));
    expect(await login('127.0.0.62', 'david', 'password1')).toEqual(waitFor(1));
  });
});
