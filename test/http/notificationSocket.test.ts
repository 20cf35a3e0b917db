import WebSocket from 'ws';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { NOTIFICATION_SOCKET_PATH, attachNotificationSocket } from '../../src/http/web/notificationSocket';

/** Girder 5's notification WebSocket (`/notifications/me?token=`), which the web client opens after login. */
describe('notification socket', () => {
  let api: ApiClient;
  let wsBase: string;
  let alice: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    const listener = await api.listen();
    attachNotificationSocket(listener.server, api.runtime.services);
    wsBase = `ws://127.0.0.1:${listener.port}`;
  });

  afterAll(() => api.close());

  /** Opens a socket and resolves once it is open, or with the HTTP status that refused the upgrade. */
  function connect(path: string): Promise<{ ws: WebSocket } | { status: number }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${wsBase}${path}`);
      ws.once('open', () => resolve({ ws }));
      ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0 }));
      ws.once('error', reject);
    });
  }

  const nextMessage = (ws: WebSocket) => new Promise<Record<string, unknown>>((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)))));

  it('sends the caller its own progress records, and nobody else’s', async () => {
    const opened = await connect(`${NOTIFICATION_SOCKET_PATH}?token=${alice.token}`);
    if (!('ws' in opened)) throw new Error(`refused with ${opened.status}`);
    const received = nextMessage(opened.ws);
    await api.runtime.services.progress.start({ on: true, userId: admin._id, title: 'not for alice', message: 'm' });
    await api.runtime.services.progress.start({ on: true, userId: alice._id, title: 'Copying folder f', message: 'Calculating folder size...' });
    const record = await received;
    expect(record).toMatchObject({ type: 'progress', userId: alice._id, data: { title: 'Copying folder f', message: 'Calculating folder size...' } });
    opened.ws.close();
  });

  it('refuses a missing or invalid token with 401 and another path with 404', async () => {
    expect(await connect(NOTIFICATION_SOCKET_PATH)).toEqual({ status: 401 });
    expect(await connect(`${NOTIFICATION_SOCKET_PATH}?token=${'x'.repeat(64)}`)).toEqual({ status: 401 });
    expect(await connect(`/notifications/other?token=${alice.token}`)).toEqual({ status: 404 });
  });

  it('closes the socket (1009) on an oversized incoming frame instead of buffering it', async () => {
    const opened = await connect(`${NOTIFICATION_SOCKET_PATH}?token=${alice.token}`);
    if (!('ws' in opened)) throw new Error(`refused with ${opened.status}`);
    const closed = new Promise<number>((resolve) => opened.ws.once('close', (code) => resolve(code)));
    opened.ws.send(Buffer.alloc(1024 * 1024));
    expect(await closed).toBe(1009);
  });
});
