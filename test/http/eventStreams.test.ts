import http from 'node:http';
import { ok, startApi, type ApiClient, type Listener, type TestUser } from '../support/apiClient';
import { folderStream } from '../../src/domain/folder';
import { eventStreamLimits } from '../../src/http/resources/events';

let api: ApiClient;
let listener: Listener;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let alicePrivate: string;

/** An SSE reader on `path` under this test's listener. */
const sse = (path: string, headers: Record<string, string> = {}) => listener.sse(path, headers);

const tokenHeader = (user: TestUser) => ({ 'Girder-Token': user.token });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The positions of a folder stream's events after `since`, straight from the event store. */
async function storedPositions(folderId: string, since = 0n): Promise<string[]> {
  const out: string[] = [];
  for await (const e of api.runtime.services.eventStore.readStream(folderStream(folderId)))
    if (e.position > since) out.push(e.position.toString());
  return out;
}

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  alicePrivate = await api.defaultFolder(alice, 'Private');
  listener = await api.listen();
});
afterAll(() => api.close());

describe('GET /folder/:id/events', () => {
  it('catches up, goes live, and resumes with Last-Event-ID: every event exactly once', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Watched');
    for (let i = 0; i < 3; i++)
      ok(
        await api
          .as(alice)
          .put(`/folder/${f}`)
          .type('form')
          .send({ description: `before ${i}` }),
        'update',
      );

    const first = sse(`/folder/${f}/events?since=0`, tokenHeader(alice));
    await first.opened;
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('text/event-stream');
    await first.waitFor((events) => events.length === 4);
    expect(first.events.map((e) => e.event)).toEqual([
      'FolderCreated',
      'FolderUpdated',
      'FolderUpdated',
      'FolderUpdated',
    ]);
    expect(first.events[0].json).toMatchObject({
      streamId: `folder-${f}`,
      revision: 0,
      type: 'FolderCreated',
      userId: alice._id,
      login: 'alice',
    });
    expect(first.events.map((e) => e.id)).toEqual(first.events.map((e) => e.json.position));

    // Live, while writes keep coming from another client.
    const writer = (async () => {
      for (let i = 0; i < 20; i++)
        ok(
          await api
            .as(alice)
            .put(`/folder/${f}`)
            .type('form')
            .send({ description: `live ${i}` }),
          'live update',
        );
    })();
    await first.waitFor((events) => events.length >= 10);
    first.close();
    const lastSeen = first.events[first.events.length - 1].id;
    await writer;
    ok(
      await api
        .as(alice)
        .put(`/folder/${f}/metadata`)
        .set('Content-Type', 'application/json')
        .send('{"after": "reconnect"}'),
      'meta',
    );

    const second = sse(`/folder/${f}/events?since=0`, { ...tokenHeader(alice), 'Last-Event-ID': lastSeen });
    const all = await storedPositions(f);
    await second.waitFor((events) => events.length > 0 && events[events.length - 1].id === all[all.length - 1]);
    const seen = [...first.events, ...second.events].map((e) => e.id);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    // ?since= does the same.
    const third = sse(`/folder/${f}/events?since=${all[all.length - 3]}`, tokenHeader(alice));
    await third.waitFor((events) => events.length === 2);
    expect(third.events.map((e) => e.id)).toEqual(all.slice(-2));
    second.close();
    third.close();
  });

  it('resumes without gaps while the writes race the reconnects', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Racing');
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop && i < 200; i++)
        ok(
          await api
            .as(alice)
            .put(`/folder/${f}`)
            .type('form')
            .send({ description: `r${i}` }),
          'update',
        );
    })();
    const seen: string[] = [];
    let lastId = '0';
    for (let round = 0; round < 5; round++) {
      const c = sse(`/folder/${f}/events`, { ...tokenHeader(alice), 'Last-Event-ID': lastId });
      await c.opened;
      await c.waitFor((events) => events.length >= 3, 10_000);
      await sleep(5 * round);
      c.close();
      seen.push(...c.events.map((e) => e.id));
      lastId = c.events[c.events.length - 1].id;
    }
    stop = true;
    await writer;
    const tail = sse(`/folder/${f}/events`, { ...tokenHeader(alice), 'Last-Event-ID': lastId });
    const all = await storedPositions(f);
    if (lastId !== all[all.length - 1])
      await tail.waitFor((events) => events.length > 0 && events[events.length - 1].id === all[all.length - 1]);
    tail.close();
    seen.push(...tail.events.map((e) => e.id));
    expect(seen).toEqual(all);
  });

  it('streams the subtree with subtree=true, only what the caller may read', async () => {
    const t = await api.newFolder(alice, alicePrivate, `Tree ${Math.random()}`);
    const open = await api.newFolder(alice, t, 'open');
    const secret = await api.newFolder(alice, t, 'secret');
    const outside = await api.newFolder(alice, alicePrivate, `Outside ${Math.random()}`);
    const access = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 0 },
      ],
      groups: [],
    };
    ok(await api.putFolderAccess(alice, t, access, { recurse: 'true' }), 'share');
    ok(
      await api
        .as(alice)
        .put(`/folder/${secret}/access`)
        .type('form')
        .send({ access: JSON.stringify({ users: [{ id: alice._id, level: 2 }], groups: [] }) }),
      'hide',
    );
    const since = String(await api.runtime.services.eventStore.headPosition());

    const bobs = sse(`/folder/${t}/events?subtree=true&since=${since}`, tokenHeader(bob));
    const alices = sse(`/folder/${t}/events?subtree=true&since=${since}`, tokenHeader(alice));
    const own = sse(`/folder/${t}/events?since=${since}`, tokenHeader(alice));
    await Promise.all([bobs.opened, alices.opened, own.opened]);
    const item = await api.newItem(alice, open, 'visible item');
    await api.newItem(alice, secret, 'hidden item');
    ok(await api.as(alice).put(`/folder/${outside}`).type('form').send({ description: 'elsewhere' }), 'outside');
    ok(await api.as(alice).put(`/folder/${open}`).type('form').send({ description: 'seen' }), 'open');
    ok(await api.as(alice).put(`/folder/${t}`).type('form').send({ description: 'root' }), 'root');

    await alices.waitFor((events) => events.length === 4);
    expect(alices.events.map((e) => [e.event, e.json.data.folderId])).toEqual([
      ['ItemCreated', open],
      ['ItemCreated', secret],
      ['FolderUpdated', open],
      ['FolderUpdated', t],
    ]);
    await bobs.waitFor((events) => events.length === 3);
    expect(bobs.events.map((e) => [e.event, e.json.data.itemId ?? e.json.data.folderId])).toEqual([
      ['ItemCreated', item],
      ['FolderUpdated', open],
      ['FolderUpdated', t],
    ]);
    await own.waitFor((events) => events.length === 1);
    expect(own.events.map((e) => e.json.data.folderId)).toEqual([t]);
    // Nothing else arrives later (a marker event on the root closes the check).
    ok(await api.as(alice).put(`/folder/${t}`).type('form').send({ description: 'marker' }), 'marker');
    await own.waitFor((events) => events.length === 2);
    await alices.waitFor((events) => events.length === 5);
    expect(alices.events[4].json.data.description).toBe('marker');
    for (const c of [bobs, alices, own]) c.close();
  });

  it('needs READ on the folder and a valid position', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Private stream');
    const denied = await api.as(bob).get(`/folder/${f}/events`);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: `Read access denied for folder ${f} (user ${bob._id}).`, type: 'access' });
    expect((await api.anonymous().get(`/folder/${f}/events`)).status).toBe(401);
    const bad = await api.as(alice).get(`/folder/${f}/events`).query({ since: 'x' });
    expect(bad.body).toEqual({ message: 'Invalid value for since: "x". Expected a position.', type: 'rest' });
  });

  it('sends heartbeats on idle streams', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Quiet');
    const saved = { ...eventStreamLimits };
    eventStreamLimits.heartbeatMs = 50;
    try {
      const c = sse(`/folder/${f}/events`, tokenHeader(alice));
      await c.opened;
      await sleep(200);
      c.close();
      expect(c.body).toContain(': heartbeat\n\n');
      expect(c.events).toEqual([]);
    } finally {
      Object.assign(eventStreamLimits, saved);
    }
  });

  /** Connects without reading, lets `work` run, then reads everything the server sent until it ended the stream. */
  async function stalledClient(path: string, work: () => Promise<void>): Promise<string> {
    const res = await new Promise<http.IncomingMessage>((resolve) => {
      http.get(`${listener.origin}/api/v1${path}`, { headers: tokenHeader(alice) }, (r) => {
        r.pause();
        resolve(r);
      });
    });
    await work();
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      body += chunk;
    });
    res.resume();
    await new Promise((resolve) => res.on('end', resolve));
    return body;
  }
  const overflowTail =
    'event: overflow\ndata: {"message":"The client did not read the stream fast enough; the stream was closed."}\n\n';
  const bigMeta = (i: number) => JSON.stringify({ blob: 'x'.repeat(400_000), i });

  // Megabytes of events through a stream: some 20 s alone, more on a loaded machine (the timeout below).
  it('cuts off a live client that does not read with a final overflow event', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Firehose');
    const saved = { ...eventStreamLimits };
    eventStreamLimits.maxBufferedBytes = 256 * 1024;
    try {
      const body = await stalledClient(`/folder/${f}/events`, async () => {
        for (let i = 0; i < 40; i++)
          ok(
            await api.as(alice).put(`/folder/${f}/metadata`).set('Content-Type', 'application/json').send(bigMeta(i)),
            'meta',
          );
      });
      expect(body.endsWith(overflowTail)).toBe(true);
      expect(body.split('\n\n').filter((b) => b.startsWith('id: ')).length).toBeLessThan(40);
    } finally {
      Object.assign(eventStreamLimits, saved);
    }
  }, 90_000);

  // Megabytes of events through a stream: some 20 s alone, more on a loaded machine (the timeout below).
  it('waits for a slow client during catch-up, and cuts off one that does not read at all', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Backlog');
    for (let i = 0; i < 60; i++) {
      ok(
        await api
          .as(alice)
          .put(`/folder/${f}/metadata`)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ blob: 'y'.repeat(100_000), i })),
        'meta',
      );
    }
    const saved = { ...eventStreamLimits };
    eventStreamLimits.catchUpDrainTimeoutMs = 300;
    try {
      const body = await stalledClient(`/folder/${f}/events?since=0`, async () => {
        await sleep(1000);
      });
      expect(body.endsWith(overflowTail)).toBe(true);
      // A client that reads gets the whole backlog (catch-up waits for it instead of overflowing).
      eventStreamLimits.maxBufferedBytes = 256 * 1024;
      const reading = sse(`/folder/${f}/events?since=0`, tokenHeader(alice));
      await reading.waitFor((events) => events.length === 61, 20_000);
      reading.close();
    } finally {
      Object.assign(eventStreamLimits, saved);
    }
  }, 90_000);
});

describe('GET /events', () => {
  it('streams every event to site admins, filtered by type, without secrets', async () => {
    const since = String(await api.runtime.services.eventStore.headPosition());
    const all = sse(`/events?since=${since}`, tokenHeader(admin));
    const folders = sse(`/events?since=${since}&types=FolderCreated,ItemCreated`, tokenHeader(admin));
    await Promise.all([all.opened, folders.opened]);
    expect(all.status).toBe(200);
    const carol = await api.createUser('carol');
    const f = await api.newFolder(carol, await api.defaultFolder(carol, 'Private'), 'Carol stuff');
    await api.newItem(carol, f, 'thing');
    await folders.waitFor((events) => events.some((e) => e.event === 'ItemCreated'));
    expect(folders.events.map((e) => e.event).every((t) => t === 'FolderCreated' || t === 'ItemCreated')).toBe(true);
    await all.waitFor((events) => events.some((e) => e.event === 'ItemCreated'));
    const types = all.events.map((e) => e.event);
    expect(types).toEqual(expect.arrayContaining(['UserRegistered', 'TokenIssued', 'FolderCreated', 'ItemCreated']));
    const text = all.body;
    expect(text).not.toMatch(/passwordHash|scrypt\$/);
    const issued = all.events.find((e) => e.event === 'TokenIssued')!;
    expect(issued.json.data.hash).toBeUndefined();
    expect(issued.json.streamId).toBe('token-…');
    for (const c of [all, folders]) c.close();

    expect((await api.as(alice).get('/events')).status).toBe(403);
    expect((await api.anonymous().get('/events')).status).toBe(401);
  });

  it('publishes the JSON Schemas of the event payloads', async () => {
    const res = await api.anonymous().get('/events/schema');
    expect(res.status).toBe(200);
    expect(res.body.streams.folder.stream).toBe('folder-<folderId>');
    expect(res.body.events.FolderCreated).toMatchObject({
      category: 'folder',
      stream: 'folder-<folderId>',
      data: { type: 'object', properties: { folderId: { type: 'string' }, name: { type: 'string' } } },
    });
    expect(res.body.events.FolderCreated.data.required).toEqual(
      expect.arrayContaining(['folderId', 'name', 'parentType', 'access']),
    );
    expect(Object.keys(res.body.events)).toEqual(
      expect.arrayContaining(['FolderDeleted', 'FolderRestored', 'ItemCreated', 'FileCreated', 'UploadStarted']),
    );
    expect(res.body.metadata.properties).toHaveProperty('correlationId');
  });
});
