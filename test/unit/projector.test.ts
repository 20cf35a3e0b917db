import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite/sqliteEventStore';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import { spawnSync } from 'node:child_process';
import {
  PROJECTOR_LEASE,
  Projector,
  ProjectionLagError,
  READ_MODELS_CHECKPOINT,
} from '../../src/projections/projector';
import { DomainEvents } from '../../src/bus/domainEvents';
import { planned, type Projection } from '../../src/projections/projection';
import type { NewEvent, RecordedEvent } from '../../src/ports/eventStore';
import { errorResponse } from '../../src/http/errorMapping';
import { startApi } from '../support/apiClient';

const meta = { userId: null, requestId: null, correlationId: null, causationId: null, at: '2024-01-01T00:00:00.000Z' };
const tick = (n: number): NewEvent => ({ type: 'Tick', data: { n }, metadata: meta });

/** A projection that records what it was handed (inside the read-model transaction). */
function recorder(): Projection & { seen: bigint[] } {
  const seen: bigint[] = [];
  return { seen, handlers: { Tick: (event: RecordedEvent) => void seen.push(event.position) } };
}

interface Stores {
  db: SqliteDatabase;
  store: SqliteEventStore;
  readModel: SqliteReadModel;
  close(): Promise<void>;
}

function openStores(file: string): Stores {
  const db = openDatabase(file);
  const store = new SqliteEventStore(db);
  const readModel = new SqliteReadModel(db);
  return {
    db,
    store,
    readModel,
    async close() {
      await store.dispose();
      db.close();
    },
  };
}

describe('Projector', () => {
  let dir: string;
  let file: string;
  let stores: Stores;
  const projectors: Projector[] = [];
  const projector = (projection: Projection, s: Stores = stores) => {
    const p = new Projector(s.store, s.readModel, projection);
    projectors.push(p);
    return p;
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'projector-test-'));
    file = path.join(dir, 'folder-service.sqlite');
    stores = openStores(file);
  });
  afterEach(async () => {
    for (const p of projectors.splice(0)) await p.stop();
    await stores.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('applies every event exactly once, strictly in $all order, through catch-up and live', async () => {
    for (let i = 0; i < 20; i++)
      await stores.store.appendToStream(`tick-${i % 5}`, [tick(i)], { expectedState: 'any' });
    const projection = recorder();
    const p = projector(projection);
    await p.start();
    expect(projection.seen).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i + 1)));
    // Live: concurrent appends to many streams, several events per append.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stores.store.appendToStream(`live-${i % 7}`, [tick(i), tick(i)], { expectedState: 'any' }),
      ),
    );
    const head = await stores.store.headPosition();
    await p.waitFor(head);
    expect(head).toBe(60n);
    expect(projection.seen).toEqual(Array.from({ length: 60 }, (_, i) => BigInt(i + 1)));
    expect(await stores.readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(60n);
    expect(p.position$.value).toBe(60n);
  });

  it('treats replaying an already-applied event as a no-op', async () => {
    await stores.store.appendToStream('tick-a', [tick(1), tick(2)], { expectedState: 'no_stream' });
    const projection = recorder();
    const p = projector(projection);
    await p.start();
    const events: RecordedEvent[] = [];
    for await (const event of stores.store.readAll()) events.push(event);
    for (const event of events) expect(await p.applyEvent(event)).toBe(false);
    expect(projection.seen).toEqual([1n, 2n]);
  });

  it('applies an event and its checkpoint atomically: a failing handler leaves both untouched', async () => {
    const p = projector({
      handlers: {
        Tick: (event, tx) => {
          tx.tokens.put({ hash: `h${String(event.position)}`, userId: 'u', scope: [], created: 'c', expires: 'e' });
          if ((event.data as { n: number }).n === 2) throw new Error('projection bug');
        },
      },
    });
    await stores.store.appendToStream('tick-a', [tick(1)], { expectedState: 'no_stream' });
    await p.start();
    const before = await stores.readModel.dump();
    const [, failing] = await (async () => {
      await stores.store.appendToStream('tick-a', [tick(2)], { expectedState: 0n });
      const all: RecordedEvent[] = [];
      for await (const event of stores.store.readAll()) all.push(event);
      return all;
    })();
    await expect(p.waitFor(failing.position, 5000)).rejects.toThrow('projection bug');
    expect(await stores.readModel.dump()).toEqual(before);
    expect(await stores.readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(1n);
  });

  it('fails waiting writers at once when a projection throws, and refuses to start on such a log', async () => {
    const failing: Projection = {
      handlers: {
        Tick: () => {
          throw new Error('cannot project');
        },
      },
    };
    const p = projector(failing);
    await p.start();
    const { position } = await stores.store.appendToStreams([
      { streamId: 'tick-x', expectedState: 'any', events: [tick(1)] },
    ]);
    const started = Date.now();
    await expect(p.waitFor(position, 5000)).rejects.toThrow('cannot project');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(p.failed?.message).toBe('cannot project');
    await expect(projector(failing).start()).rejects.toThrow('cannot project');
  });

  it('gives up waiting with ProjectionLagError, which the API reports as 503', async () => {
    const p = projector(recorder());
    await p.start();
    await expect(p.waitFor(1000n, 50)).rejects.toBeInstanceOf(ProjectionLagError);
    expect(
      errorResponse(new ProjectionLagError(1000n), { loggedIn: false, production: false, requestId: 'r' }),
    ).toEqual({
      status: 503,
      retryAfterSeconds: 1,
      body: { message: 'The service is catching up; retry shortly.', type: 'rest' },
    });
  });

  it('keeps its checkpoint across a restart: nothing is applied twice', async () => {
    for (let i = 0; i < 10; i++) await stores.store.appendToStream('tick-r', [tick(i)], { expectedState: 'any' });
    const first = recorder();
    const p1 = projector(first);
    await p1.start();
    expect(first.seen).toHaveLength(10);
    await p1.stop();
    projectors.splice(projectors.indexOf(p1), 1);
    await stores.close();

    stores = openStores(file);
    expect(await stores.readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(10n);
    const second = recorder();
    const p2 = projector(second);
    await p2.start();
    expect(second.seen).toEqual([]);
    expect(p2.position$.value).toBe(10n);
    await stores.store.appendToStream('tick-r', [tick(10)], { expectedState: 9n });
    await p2.waitFor(11n);
    expect(second.seen).toEqual([11n]);
  });
});

describe('Projector in the service', () => {
  it('bootstraps twice on the same DATA_DIR without applying anything twice', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'projector-restart-'));
    try {
      const first = await startApi({}, { dataDir });
      await first.createUser('admin');
      await first.createUser('alice');
      const dump = await first.runtime.services.readModel.dump();
      const head = await first.runtime.services.eventStore.headPosition();
      expect(await first.runtime.services.readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(head);
      await first.close();

      const second = await startApi({}, { dataDir });
      try {
        const { readModel, eventStore, projector } = second.runtime.services;
        expect(await eventStore.headPosition()).toBe(head);
        expect(await readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(head);
        expect(projector.position$.value).toBe(head);
        expect(await readModel.dump()).toEqual(dump);
        // Replaying the whole log by hand is a no-op too.
        for await (const event of eventStore.readAll()) expect(await projector.applyEvent(event)).toBe(false);
        expect(await readModel.dump()).toEqual(dump);
        const login = await second.anonymous().get('/user/authentication').auth('alice', 'password1');
        expect(login.status).toBe(200);
      } finally {
        await second.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('answers a write only once its projection is visible (read-your-writes)', async () => {
    const api = await startApi();
    try {
      const admin = await api.createUser('admin');
      // Sequential: each GET right after its POST.
      for (let i = 0; i < 15; i++) {
        const login = `user${i}`;
        const created = await api
          .anonymous()
          .post('/user')
          .type('form')
          .send({ login, email: `${login}@example.com`, firstName: 'F', lastName: 'L', password: 'password1' });
        expect(created.status).toBe(200);
        const read = await api.as(admin).get(`/user/${created.body._id}`);
        expect(read.status).toBe(200);
        expect(read.body.login).toBe(login);
        const me = await api.as(created.body.authToken.token).get('/user/me');
        expect(me.body.login).toBe(login);
      }
      // Concurrent: many writers, each reading its own write at once.
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const login = `para${i}`;
          const created = await api
            .as(admin)
            .post('/user')
            .type('form')
            .send({ login, email: `${login}@example.com`, firstName: 'F', lastName: 'L', password: 'password1' });
          expect(created.status).toBe(200);
          const read = await api.as(admin).get(`/user/${created.body._id}`);
          expect(read.status).toBe(200);
        }),
      );
      const list = await api.as(admin).get('/user?limit=1');
      expect(list.headers['girder-total-count']).toBe('26');
    } finally {
      await api.close();
    }
  });
});

describe('Projector with a lease (two processes on one read model)', () => {
  let dir: string;
  let file: string;
  const opened: Stores[] = [];
  const running: Projector[] = [];
  const TTL = 600;
  const open = () => {
    const s = openStores(file);
    opened.push(s);
    return s;
  };
  const leased = (s: Stores, projection: Projection, options: { domainEvents?: DomainEvents; ttlMs?: number } = {}) => {
    const p = new Projector(s.store, s.readModel, projection, {
      domainEvents: options.domainEvents,
      lease: { ttlMs: options.ttlMs ?? TTL },
    });
    running.push(p);
    return p;
  };
  const until = async (condition: () => boolean | Promise<boolean>, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'projector-lease-'));
    file = path.join(dir, 'folder-service.sqlite');
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop();
    for (const s of opened.splice(0)) await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('projects in one process only; the standby waits on the checkpoint and publishes what the holder applied', async () => {
    const [one, two] = [open(), open()];
    const [seenByOne, seenByTwo] = [recorder(), recorder()];
    const events = new DomainEvents();
    const published: bigint[] = [];
    events.applied$.subscribe((event) => published.push(event.position));
    const holder = leased(one, seenByOne);
    await holder.start();
    const standby = leased(two, seenByTwo, { domainEvents: events });
    await standby.start();
    expect([holder.role, standby.role]).toEqual(['holder', 'standby']);
    expect((await two.readModel.leases.get(PROJECTOR_LEASE))?.holder).toBe(holder.holderId);

    // Writes through the standby's store: its waitFor resolves once the holder's projection is in the read model.
    // (Another connection's commits reach the holder's subscription through the store's poll, within 250 ms.)
    for (let i = 1; i <= 4; i++) {
      const { position } = await two.store.appendToStreams([
        { streamId: 'tick-s', expectedState: 'any', events: [tick(i)] },
      ]);
      await standby.waitFor(position, 5000);
      expect(await two.readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBeGreaterThanOrEqual(position);
    }
    expect(seenByOne.seen).toHaveLength(4);
    expect(seenByTwo.seen).toEqual([]);
    await until(() => published.length === 4);
    expect(published).toEqual(seenByOne.seen);
    expect(standby.position$.value).toBe(4n);
    // The lease is renewed: well past its time to live, nothing changed hands.
    await new Promise((resolve) => setTimeout(resolve, TTL * 1.5));
    expect([holder.role, standby.role]).toEqual(['holder', 'standby']);
  });

  it("a standby only reads the lease while it is held: its retries never wait for the holder's write lock", async () => {
    const [one, two] = [open(), open()];
    const holder = leased(one, recorder());
    await holder.start();
    const standby = leased(two, recorder());
    await standby.start();
    const acquire = jest.spyOn(two.readModel.leases, 'acquire');
    const get = jest.spyOn(two.readModel.leases, 'get');
    await new Promise((resolve) => setTimeout(resolve, TTL * 1.5));
    expect(get).toHaveBeenCalled();
    expect(acquire).not.toHaveBeenCalled();
    // Once the holder is gone, the next retry takes it.
    await holder.stop();
    await until(() => standby.role === 'holder', TTL * 2);
    expect(acquire).toHaveBeenCalled();
  });

  it('hands over when the holder stops: the standby projects on from the checkpoint', async () => {
    const [one, two] = [open(), open()];
    const [seenByOne, seenByTwo] = [recorder(), recorder()];
    const holder = leased(one, seenByOne);
    await holder.start();
    const standby = leased(two, seenByTwo);
    await standby.start();
    await one.store.appendToStream('tick-h', [tick(1), tick(2)], { expectedState: 'any' });
    await holder.waitFor(2n);
    await holder.stop();
    expect(await two.readModel.leases.get(PROJECTOR_LEASE)).toBeNull();
    await until(() => standby.role === 'holder', TTL);
    const { position } = await two.store.appendToStreams([
      { streamId: 'tick-h', expectedState: 'any', events: [tick(3)] },
    ]);
    await standby.waitFor(position, 2000);
    expect(seenByOne.seen).toEqual([1n, 2n]);
    expect(seenByTwo.seen).toEqual([3n]);
  });

  it('stops projecting when the lease passes to someone else, and takes it back once it is free', async () => {
    const s = open();
    const seen = recorder();
    const p = leased(s, seen);
    await p.start();
    // Another process takes the lease over (as if this one had been declared gone).
    expect(await s.readModel.leases.acquire(PROJECTOR_LEASE, 'intruder', 60_000, p.holderId)).toBe(true);
    await until(() => p.role === 'standby', TTL);
    await s.store.appendToStream('tick-i', [tick(1)], { expectedState: 'any' });
    await expect(p.waitFor(1n, 300)).rejects.toBeInstanceOf(ProjectionLagError);
    expect(seen.seen).toEqual([]);
    await s.readModel.leases.release(PROJECTOR_LEASE, 'intruder');
    await p.waitFor(1n, 2000);
    expect(p.role).toBe('holder');
    expect(seen.seen).toEqual([1n]);
  });

  it('cannot write after a takeover it has not noticed yet: the epoch fences it off and it stands by', async () => {
    const s = open();
    const seen = recorder();
    // A long TTL: the next renewal, which would notice the takeover, is 20 s away (a stalled holder).
    const p = leased(s, seen, { ttlMs: 60_000 });
    await p.start();
    expect(await s.readModel.leases.acquire(PROJECTOR_LEASE, 'intruder', 60_000, p.holderId)).toBe(true);
    await s.store.appendToStream('tick-x', [tick(1)], { expectedState: 'any' });
    await until(() => p.role === 'standby', 3000);
    // Refused inside the read-model transaction: nothing applied, the checkpoint did not move, and it is no failure.
    expect(seen.seen).toEqual([]);
    expect(await s.readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(0n);
    expect(p.failed).toBeNull();
    expect((await s.readModel.leases.get(PROJECTOR_LEASE))?.holder).toBe('intruder');
  });

  it('stops projecting before its lease could expire when renewals keep failing', async () => {
    const s = open();
    const p = leased(s, recorder());
    await p.start();
    const taken = Date.now();
    const renew = jest.spyOn(s.readModel.leases, 'renew').mockRejectedValue(new Error('read model unreachable'));
    const release = jest.spyOn(s.readModel.leases, 'release');
    await until(() => p.role === 'standby', TTL * 2);
    expect(Date.now() - taken).toBeLessThan(TTL);
    expect(renew).toHaveBeenCalled();
    expect(release).toHaveBeenCalled();
    renew.mockRestore();
    await until(() => p.role === 'holder', TTL * 2);
  });

  it('keeps its lease through a catch-up that lasts several times the lease time to live', async () => {
    const s = open();
    const events = Array.from({ length: 40 }, (_, i) => tick(i + 1));
    await s.store.appendToStream('tick-backlog', events, { expectedState: 'any' });
    // Each event's plan waits 25 ms (an asynchronous read, as a slow read model would make it): about 1 s of catch-up,
    // more than three times the lease's 300 ms, with the event loop free all along.
    const slow: Projection = {
      handlers: {
        Tick: planned({
          plan: () => new Promise<null>((resolve) => setTimeout(() => resolve(null), 25)),
          apply: () => undefined,
        }),
      },
    };
    const holder = leased(s, slow, { ttlMs: 300 });
    const starting = holder.start();
    const standby = leased(open(), recorder(), { ttlMs: 300 });
    await standby.start();
    await starting;
    expect(holder.position$.value).toBe(40n);
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect([holder.role, standby.role]).toEqual(['holder', 'standby']);
    expect((await s.readModel.leases.get(PROJECTOR_LEASE))?.holder).toBe(holder.holderId);
  });

  it('steps down on a projection failure, frees the lease, and resumes once the projection works', async () => {
    const s = open();
    let broken = true;
    const seen: bigint[] = [];
    const p = leased(
      s,
      {
        handlers: {
          Tick: (event) => {
            if (broken) throw new Error('projection bug');
            seen.push(event.position);
          },
        },
      },
      { ttlMs: 300 },
    );
    await p.start();
    await s.store.appendToStream('tick-f', [tick(1)], { expectedState: 'any' });
    await expect(p.waitFor(1n, 2000)).rejects.toThrow('projection bug');
    await until(() => p.role === 'standby');
    expect(p.failed?.message).toBe('projection bug');
    await expect(p.waitFor(1n, 2000)).rejects.toThrow('projection bug');
    broken = false;
    await until(() => p.role === 'holder' && p.failed === null, 3000);
    await p.waitFor(1n, 1000);
    expect(seen).toEqual([1n]);
  });

  it('takes the lease of a holder whose process is gone at once', async () => {
    const s = open();
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    const gone = new Projector(s.store, s.readModel, recorder(), { lease: { ttlMs: 60_000 } }).holderId!.replace(
      /^(.+?):\d+:/,
      `$1:${ended}:`,
    );
    expect(await s.readModel.leases.acquire(PROJECTOR_LEASE, gone, 60_000)).toBe(true);
    const p = leased(s, recorder(), { ttlMs: 60_000 });
    await p.start();
    expect(p.role).toBe(/:\d+:\d+:[0-9a-f]+$/.test(gone) ? 'holder' : 'standby');
  });
});
