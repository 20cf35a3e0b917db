import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApi, type ApiClient, type Listener, type TestUser } from '../support/apiClient';
import { SseWriter, formatSseEvent } from '../../src/http/sse';
import { sortedJson } from '../../src/http/render';
import type { NotificationRecord } from '../../src/ports/notificationStore';
import { notificationStoreOf } from '../../src/infra/readmodel/createReadModel';
import { SseClient } from '../support/sseClient';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('notifications', () => {
  let api: ApiClient;
  let listener: Listener;
  let admin: TestUser;
  let alice: TestUser;
  const clients: SseClient[] = [];
  const open = (query: string, headers: Record<string, string> = {}) => {
    const client = listener.sse(`/notification/stream${query}`, headers);
    clients.push(client);
    return client;
  };
  const services = () => api.runtime.services;
  // The configured read model's notification store (SQLite, or MongoDB in the http-mongo project), read directly.
  const store = () => notificationStoreOf(api.runtime.services.readModel, api.runtime.db);
  const rowCount = async () => (await store().changedSince(-1, 0)).length;
  const clearRows = () => store().deleteExpired(Number.MAX_SAFE_INTEGER);

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    listener = await api.listen();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await clearRows();
  });
  afterAll(async () => {
    await api.close();
  });

  it('rejects anonymous callers with 401 on both routes', async () => {
    for (const path of ['/notification/stream', '/notification', '/notification/stream?token=bogus']) {
      const res = await api.anonymous().get(path);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'You must be logged in or have a valid auth token.', type: 'access' });
    }
  });

  it('streams existing records with sorted keys and _girderTime, then closes when timeout=0', async () => {
    const progress = await services().progress.start({
      on: true,
      userId: alice._id,
      title: 'Deleting folder f',
      message: 'Calculating folder size...',
    });
    await services().progress.start({ on: true, userId: admin._id, title: 'not for alice', message: 'm' });
    const before = Math.floor(Date.now() / 1000);
    const client = open('?timeout=0', { 'Service-Token': alice.token });
    await client.finished;
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toBe('text/event-stream');
    expect(client.headers['cache-control']).toBe('no-cache');
    expect(client.events).toHaveLength(1);
    const [event] = client.events;
    expect(event.raw).toBe(`data: ${event.data}\n\n`);
    expect(event.data).toBe(sortedJson(JSON.parse(event.data)));
    const { _girderTime, ...record } = event.json;
    expect(Number.isInteger(_girderTime)).toBe(true);
    expect(_girderTime).toBeGreaterThanOrEqual(before);
    expect(_girderTime).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(record).toEqual(progress.record);
    expect(record.data).toEqual({
      title: 'Deleting folder f',
      total: 0,
      current: 0,
      state: 'active',
      message: 'Calculating folder size...',
      estimateTime: true,
      resource: null,
      resourceName: null,
    });
    expect(client.body).toBe(client.events.map((e) => e.raw).join(''));
  });

  it("pushes each change of the caller's records as a test-driven ProgressContext advances", async () => {
    const client = open('?timeout=10', { 'Service-Token': alice.token });
    await client.opened;
    expect(client.status).toBe(200);
    await sleep(50);
    expect(client.events).toHaveLength(0);

    const progress = await services().progress.start({
      on: true,
      userId: alice._id,
      title: 'Copying folder f',
      message: 'Calculating folder size...',
    });
    const other = await services().progress.start({ on: true, userId: admin._id, title: 'admin only', message: 'm' });
    await client.waitFor((events) => events.length === 1);
    expect(client.events[0].json.data.state).toBe('active');

    await progress.update({ total: 3, force: true });
    await client.waitFor((events) => events.length === 2);
    await sleep(550);
    await progress.update({ increment: 1, message: 'Copied item a' });
    await client.waitFor((events) => events.length === 3);
    await progress.update({ increment: 1, message: 'Copied item b' }); // within 0.5 s: not written, not pushed
    await other.update({ current: 5, force: true });
    await sleep(550);
    await progress.update({ increment: 1, message: 'Copied folder f' });
    await progress.finish();
    await client.waitFor((events) => events.length === 5);
    await sleep(100);

    expect(
      client.events.map((e) => [e.json.data.total, e.json.data.current, e.json.data.state, e.json.data.message]),
    ).toEqual([
      [0, 0, 'active', 'Calculating folder size...'],
      [3, 0, 'active', 'Calculating folder size...'],
      [3, 1, 'active', 'Copied item a'],
      [3, 3, 'active', 'Copied folder f'],
      [3, 3, 'success', 'Done'],
    ]);
    expect(client.events.every((e) => e.json._id === progress.record!._id && e.json.userId === alice._id)).toBe(true);
    const updates = client.events.map((e) => Date.parse(e.json.updated));
    expect([...updates].sort((a, b) => a - b)).toEqual(updates);
    expect(client.endedAt).toBeNull();
  });

  it('filters by since (epoch seconds) on the stream and by ISO datetime on the list', async () => {
    const first = await services().progress.start({ on: true, userId: alice._id, title: 'first', message: 'm' });
    const firstUpdated = Date.parse(first.record!.updated);
    const since = Math.floor(firstUpdated / 1000) + 1;
    while (Date.now() <= since * 1000) await sleep(20);
    const second = await services().progress.start({ on: true, userId: alice._id, title: 'second', message: 'm' });

    const all = open('?timeout=0', { 'Service-Token': alice.token });
    const recent = open(`?timeout=0&since=${since}`, { 'Service-Token': alice.token });
    const future = open(`?timeout=0&since=${since + 3600}`, { 'Service-Token': alice.token });
    await Promise.all([all.finished, recent.finished, future.finished]);
    expect(all.events.map((e) => e.json.data.title)).toEqual(['first', 'second']);
    expect(recent.events.map((e) => e.json.data.title)).toEqual(['second']);
    expect(future.events).toEqual([]);
    expect(future.status).toBe(200);

    const list = await api.as(alice).get('/notification');
    expect(list.status).toBe(200);
    expect(list.headers['content-type']).toMatch(/^application\/json/);
    expect(list.body).toEqual([first.record, second.record]);
    const after = await api.as(alice).get('/notification').query({ since: first.record!.updated });
    expect(after.body.map((r: NotificationRecord) => r.data.title)).toEqual(['second']);
    const naive = await api
      .as(alice)
      .get('/notification')
      .query({ since: new Date(firstUpdated - 1).toISOString().replace('Z', '') });
    expect(naive.body.map((r: NotificationRecord) => r.data.title)).toEqual(['first', 'second']);

    // A later update moves a record after the other one in the ascending-updated list.
    await first.update({ current: 1, force: true });
    const reordered = await api.as(alice).get('/notification');
    expect(reordered.body.map((r: NotificationRecord) => r.data.title)).toEqual(['second', 'first']);
    const adminList = await api.as(admin).get('/notification');
    expect(adminList.body).toEqual([]);
  });

  it('rejects malformed since values with the reference messages', async () => {
    const badList = await api.as(alice).get('/notification').query({ since: 'yesterday' });
    expect(badList.status).toBe(400);
    expect(badList.body).toEqual({ message: 'Invalid date format for parameter since: yesterday.', type: 'rest' });
    const badStream = await api.as(alice).get('/notification/stream').query({ since: '1.5' });
    expect(badStream.status).toBe(400);
    expect(badStream.body).toEqual({ message: 'Invalid value for integer parameter since: 1.5.', type: 'rest' });
    const badTimeout = await api.as(alice).get('/notification/stream').query({ timeout: 'x' });
    expect(badTimeout.body).toEqual({ message: 'Invalid value for integer parameter timeout: x.', type: 'rest' });
  });

  it('closes after timeout seconds without events, counting from the last event', async () => {
    // Taken before the requests (and before the event below is sent): the server's clocks start after these, so the
    // lower bounds hold however late the client sees the stream open or the event arrive.
    const start = Date.now();
    const idle = open('?timeout=1', { 'Service-Token': alice.token });
    const busy = open('?timeout=1', { 'Service-Token': alice.token });
    await Promise.all([idle.opened, busy.opened]);
    await sleep(700);
    const beforeEvent = Date.now();
    const progress = await services().progress.start({
      on: true,
      userId: alice._id,
      title: 'keeps busy alive',
      message: 'm',
    });
    await busy.waitFor((events) => events.length === 1);
    await Promise.all([idle.finished, busy.finished]);
    expect(idle.endedAt! - start).toBeGreaterThanOrEqual(950);
    expect(idle.endedAt! - start).toBeLessThan(1900);
    expect(busy.endedAt! - beforeEvent).toBeGreaterThanOrEqual(950);
    expect(busy.endedAt! - start).toBeGreaterThanOrEqual(1600);
    expect(busy.events).toHaveLength(1);
    // Events after the stream closed go nowhere (and do not fail).
    await progress.finish();
  });

  it('accepts the token from the serviceToken and girderToken cookies and the token parameter', async () => {
    await services().progress.start({ on: true, userId: alice._id, title: 'cookie', message: 'm' });
    const viaCookie = open('?timeout=0', { Cookie: `serviceToken=${alice.token}` });
    const viaAlias = open('?timeout=0', { Cookie: `other=1; girderToken=${alice.token}` });
    const viaParam = open(`?timeout=0&token=${alice.token}`);
    await Promise.all([viaCookie.finished, viaAlias.finished, viaParam.finished]);
    for (const client of [viaCookie, viaAlias, viaParam]) {
      expect(client.status).toBe(200);
      expect(client.events.map((e) => e.json.data.title)).toEqual(['cookie']);
    }
    const list = await api.anonymous().get('/notification').set('Cookie', `serviceToken=${alice.token}`);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
  });

  it('answers HEAD with the stream headers without holding the connection open', async () => {
    const started = Date.now();
    const res = await api.as(alice).head('/notification/stream');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('records nothing at all when progress is off', async () => {
    const client = open('?timeout=2', { 'Service-Token': alice.token });
    await client.opened;
    const ctx = await services().progress.start({
      on: false,
      userId: alice._id,
      title: 'Deleting folder f',
      message: 'Calculating folder size...',
    });
    await ctx.update({ total: 3, force: true });
    await ctx.update({ increment: 3, force: true });
    await ctx.finish();
    await sleep(100);
    expect(await rowCount()).toBe(0);
    expect(client.events).toEqual([]);
    const list = await api.as(alice).get('/notification');
    expect(list.body).toEqual([]);
  });

  it('throttles writes during a burst of updates and pushes the exact final state', async () => {
    const client = open('?timeout=5', { 'Service-Token': alice.token });
    await client.opened;
    const started = Date.now();
    const progress = await services().progress.start({
      on: true,
      userId: alice._id,
      title: 'burst',
      message: 'Calculating folder size...',
    });
    await progress.update({ total: 500 });
    for (let i = 1; i <= 500; i += 1) await progress.update({ increment: 1, message: `Deleted item ${i}` });
    const elapsed = Date.now() - started;
    await progress.finish();
    await client.waitFor((events) => events.some((e) => e.json.data.state === 'success'));
    await sleep(100);
    expect(client.events.length).toBeLessThanOrEqual(2 + Math.floor(elapsed / 500) + 1);
    expect(client.events.at(-1)!.json.data).toMatchObject({
      total: 500,
      current: 500,
      state: 'success',
      message: 'Done',
    });
    const list = await api.as(alice).get('/notification');
    expect(list.body).toHaveLength(1);
    expect(list.body[0].data).toMatchObject({ total: 500, current: 500, state: 'success', message: 'Done' });
  });

  it('stops pushing to a client that went away', async () => {
    const client = open('?timeout=30', { 'Service-Token': alice.token });
    await client.opened;
    client.close();
    await sleep(50);
    const progress = await services().progress.start({
      on: true,
      userId: alice._id,
      title: 'after abort',
      message: 'm',
    });
    await progress.finish();
    expect(client.events).toEqual([]);
  });
});

describe('SseWriter', () => {
  let httpServer: http.Server;
  let port: number;
  let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;

  beforeAll(async () => {
    httpServer = http.createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    port = (httpServer.address() as AddressInfo).port;
  });
  afterAll(async () => {
    httpServer.closeAllConnections();
    await new Promise((resolve) => httpServer.close(resolve));
  });

  it('frames events with event, id, retry and one data line per payload line, and heartbeats as comments', async () => {
    expect(formatSseEvent({ data: 'a\nb\r\nc', event: 'folder', id: '7', retry: 1500 })).toBe(
      'event: folder\nid: 7\nretry: 1500\ndata: a\ndata: b\ndata: c\n\n',
    );
    expect(() => formatSseEvent({ data: 'x', id: 'a\nb' })).toThrow('must not contain line breaks');
    handler = (_req, res) => {
      const sse = SseWriter.open(res, { heartbeatMs: 40, headers: { 'X-Test': 'yes' } });
      sse.send({ data: '{"n":1}', id: '1' });
      // Ends after the second heartbeat the writer's own timer wrote, however late a loaded machine runs it.
      const comment = sse.comment.bind(sse);
      let heartbeats = 0;
      sse.comment = (text) => {
        const written = comment(text);
        if (++heartbeats === 2) {
          sse.send('plain');
          sse.close({ event: 'end', data: 'bye' });
          expect(sse.send('late')).toBe(false);
        }
        return written;
      };
    };
    const client = new SseClient(`http://127.0.0.1:${port}/`);
    await client.finished;
    expect(client.headers['content-type']).toBe('text/event-stream');
    expect(client.headers['cache-control']).toBe('no-cache');
    expect(client.headers['x-test']).toBe('yes');
    expect(client.body.startsWith('id: 1\ndata: {"n":1}\n\n: heartbeat\n\n: heartbeat\n\n')).toBe(true);
    expect(client.body.endsWith('data: plain\n\nevent: end\ndata: bye\n\n')).toBe(true);
    expect(client.body).not.toContain('late');
  });

  it('ends the stream with a final event instead of buffering without bound for a client that does not read', async () => {
    let writer!: SseWriter;
    let sent = 0;
    let closedByWriter = false;
    const overflowed = new Promise<void>((resolve) => {
      handler = (_req, res) => {
        writer = SseWriter.open(res, { heartbeatMs: 0, maxBufferedBytes: 256 * 1024 });
        writer.onClose(() => {
          closedByWriter = true;
        });
        const chunk = 'x'.repeat(64 * 1024);
        const pump = () => {
          for (let i = 0; i < 16; i += 1) {
            if (!writer.send({ data: chunk, id: String(sent) })) {
              resolve();
              return;
            }
            sent += 1;
          }
          if (sent > 20_000) {
            resolve(); // 1.3 GB: the bound clearly did not work
            return;
          }
          setImmediate(pump);
        };
        pump();
      };
    });
    const paused = await new Promise<http.IncomingMessage>((resolve) => {
      http.get(`http://127.0.0.1:${port}/`, (res) => {
        res.pause();
        resolve(res);
      });
    });
    await overflowed;
    expect(writer.overflowed).toBe(true);
    expect(writer.closed).toBe(true);
    expect(closedByWriter).toBe(true);
    expect(sent).toBeLessThan(20_000);

    let body = '';
    paused.setEncoding('utf8');
    paused.on('data', (chunk: string) => {
      body += chunk;
    });
    paused.resume();
    await new Promise((resolve) => paused.on('end', resolve));
    expect(
      body.endsWith(
        'event: overflow\ndata: {"message":"The client did not read the stream fast enough; the stream was closed."}\n\n',
      ),
    ).toBe(true);
    expect(body.split('\n\n').filter((block) => block.startsWith('id: ')).length).toBe(sent + 1);
  });
});
