import http from 'node:http';
import WebSocket from 'ws';
import { startApi, API_PREFIX, type ApiClient, type Listener, type TestUser } from '../support/apiClient';
import { NOTIFICATION_SOCKET_PATH, attachNotificationSocket } from '../../src/http/web/notificationSocket';

/**
 * Rule 5 of issue 27, streams: event streams (`/folder/:id/events`, `/events`, `/notification/stream`) and notification
 * sockets held open by one caller are capped (STREAMS_PER_CALLER, here 2): one more is answered 429 in the error
 * format; a closed one frees its slot. A user counts wherever it connects from; an anonymous caller counts per
 * client address (the test speaks from loopback addresses 127.0.0.x).
 */
const CAP = 2;
const TOO_MANY = {
  message: `Too many open event streams: at most ${CAP} per caller. Close one before opening another.`,
  type: 'rest',
};

let api: ApiClient;
let listener: Listener;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let folderPath: string;
const open: { close(): void }[] = [];

beforeAll(async () => {
  api = await startApi({ STREAMS_PER_CALLER: String(CAP) });
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  folderPath = `/folder/${await api.defaultFolder(alice, 'Public')}/events`;
  listener = await api.listen();
  attachNotificationSocket(listener.server, api.runtime.services);
});
afterEach(() => {
  for (const stream of open.splice(0)) stream.close();
});
afterAll(async () => {
  await listener?.close();
  await api?.close();
});

interface Opened {
  status: number;
  /** The JSON error body of a refusal. */
  body: unknown;
  close(): void;
}

/** Opens an event stream; resolves with its status once the headers (and, for a refusal, the body) are in. */
function stream(path: string, o: { token?: string; from?: string } = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port: listener.port,
        path: `${API_PREFIX}${path}`,
        agent: false,
        ...(o.from ? { localAddress: o.from } : {}),
        headers: o.token ? { 'Service-Token': o.token } : {},
      },
      (res) => {
        const close = () => req.destroy();
        if (res.statusCode === 200) {
          open.push({ close });
          resolve({ status: 200, body: null, close });
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), close }));
      },
    );
    req.on('error', reject);
  });
}

/** Opens a notification socket; resolves once open, or with the refusal's status and body. */
function socket(token: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${listener.port}${NOTIFICATION_SOCKET_PATH}?token=${token}`);
    ws.once('open', () => {
      const close = () => ws.close();
      open.push({ close });
      resolve({ status: 200, body: null, close });
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), close: () => undefined }));
    });
    ws.once('error', reject);
  });
}

/** Retries `attempt` until it opens: a closed stream's slot is freed when the service sees the connection close. */
async function eventually(attempt: () => Promise<Opened>): Promise<Opened> {
  for (let tries = 0; ; tries++) {
    const opened = await attempt();
    if (opened.status === 200 || tries === 50) return opened;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('open streams per caller', () => {
  it('a user holds at most the cap, across event streams and notification sockets; closing one frees a slot', async () => {
    const first = await stream(folderPath, { token: alice.token });
    expect(first.status).toBe(200);
    expect((await stream('/notification/stream', { token: alice.token })).status).toBe(200);
    for (const path of [folderPath, '/notification/stream']) {
      expect(await stream(path, { token: alice.token, from: '127.0.0.2' })).toMatchObject({
        status: 429,
        body: TOO_MANY,
      });
    }
    expect(await socket(alice.token)).toMatchObject({ status: 429, body: TOO_MANY });
    // Someone else is not affected.
    expect((await stream(folderPath, { token: bob.token })).status).toBe(200);
    first.close();
    expect((await eventually(() => socket(alice.token))).status).toBe(200);
    expect(await stream(folderPath, { token: alice.token })).toMatchObject({ status: 429, body: TOO_MANY });
  });

  it("the admin's stream of every event counts too", async () => {
    for (let i = 0; i < CAP; i++)
      expect((await eventually(() => stream('/events', { token: admin.token }))).status).toBe(200);
    expect(await stream('/events', { token: admin.token })).toMatchObject({ status: 429, body: TOO_MANY });
  });

  it('anonymous callers count per client address', async () => {
    for (let i = 0; i < CAP; i++) expect((await stream(folderPath, { from: '127.0.0.3' })).status).toBe(200);
    expect(await stream(folderPath, { from: '127.0.0.3' })).toMatchObject({ status: 429, body: TOO_MANY });
    expect((await stream(folderPath, { from: '127.0.0.4' })).status).toBe(200);
  });

  it('a stream the service ends frees its slot', async () => {
    // `timeout=0`: the notification stream sends what there is and ends.
    for (let i = 0; i < 3 * CAP; i++) {
      expect((await eventually(() => stream('/notification/stream?timeout=0', { token: bob.token }))).status).toBe(200);
    }
    for (let i = 0; i < CAP; i++)
      expect((await eventually(() => stream(folderPath, { token: bob.token }))).status).toBe(200);
    expect(await stream(folderPath, { token: bob.token })).toMatchObject({ status: 429, body: TOO_MANY });
  });
});
