import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RecordedEvent } from '../../src/ports/eventStore';
import { PROJECTOR_LEASE, READ_MODELS_CHECKPOINT } from '../../src/projections/projector';
import { startApi, type ApiClient } from '../support/apiClient';

/**
 * Two service instances on one DATA_DIR, as two processes sharing one read model (in the http-mongo project the two
 * read models share one MongoDB stand-in, see src/infra/readmodel/createReadModel.ts): one holds the projector lease,
 * the other stands by. Requests to the standby still read their own writes (it waits on the shared checkpoint), and
 * when the holder goes away the standby takes the lease over and projects.
 */

// Long enough that a loaded CI host (an event loop stalled for most of a second) does not make a holder step down
// between the assertions; the handover after a close still comes within a third of it.
const TTL_MS = 3000;
const env = { PROJECTOR_LEASE_TTL_MS: String(TTL_MS) };

async function until(condition: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('projector lease: two instances on one DATA_DIR', () => {
  let dataDir: string;
  let holder: ApiClient | undefined;
  let standby: ApiClient | undefined;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'projector-lease-http-'));
    holder = await startApi(env, { dataDir });
    standby = await startApi(env, { dataDir });
  });
  afterAll(async () => {
    await standby?.close();
    await holder?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('one instance projects; a write through the other is visible in its own next read; it reports itself as standby', async () => {
    const [a, b] = [holder!, standby!];
    expect(a.runtime.services.projector.role).toBe('holder');
    expect(b.runtime.services.projector.role).toBe('standby');
    expect((await b.runtime.services.readModel.leases.get(PROJECTOR_LEASE))?.holder).toBe(
      a.runtime.services.projector.holderId,
    );

    const published: RecordedEvent[] = [];
    const subscription = b.runtime.services.domainEvents.applied$.subscribe((event) => published.push(event));
    try {
      // Every write below goes through the standby and is read back from it at once.
      const admin = await b.createUser('admin');
      const me = await b.as(admin).get('/user/me');
      expect(me.body).toMatchObject({ login: 'admin', admin: true });
      const created = await b
        .as(admin)
        .post('/folder')
        .type('form')
        .send({ parentType: 'user', parentId: admin._id, name: 'Shared work' });
      expect(created.status).toBe(200);
      const renamed = await b.as(admin).put(`/folder/${created.body._id}`).type('form').send({ name: 'Renamed' });
      expect(renamed.status).toBe(200);
      expect(renamed.body.name).toBe('Renamed');
      const read = await b.as(admin).get(`/folder/${created.body._id}`);
      expect(read.body.name).toBe('Renamed');
      // The holder serves the same read model.
      expect((await a.as(admin).get(`/folder/${created.body._id}`)).body.name).toBe('Renamed');

      // The standby publishes what the holder applied (its SSE subscribers follow), in log order.
      const head = await b.runtime.services.eventStore.headPosition();
      await until(() => published.length > 0 && published[published.length - 1].position === head, 2000);
      expect(published.map((e) => e.position)).toEqual(
        [...published.map((e) => e.position)].sort((x, y) => (x < y ? -1 : 1)),
      );
      expect(published.some((e) => e.type === 'FolderCreated' || e.type === 'FolderUpdated')).toBe(true);
    } finally {
      subscription.unsubscribe();
    }

    const [readyA, readyB] = await Promise.all([a.site().get('/readyz'), b.site().get('/readyz')]);
    expect(readyA.status).toBe(200);
    expect(readyA.body.checks.projector).toMatchObject({ status: 'ok', lease: 'held', lagEvents: 0 });
    expect(readyB.status).toBe(200);
    expect(readyB.body.checks.projector).toMatchObject({ status: 'ok', lease: 'standby', lagEvents: 0 });
  });

  it('after the holder closes, the standby takes the lease over and projects new writes', async () => {
    const b = standby!;
    const login = await b.anonymous().get('/user/authentication').auth('admin', 'password1');
    const token = login.body.authToken.token as string;
    const adminId = login.body.user._id as string;
    await holder!.close();
    holder = undefined;

    await until(() => b.runtime.services.projector.role === 'holder', TTL_MS * 2);
    expect((await b.runtime.services.readModel.leases.get(PROJECTOR_LEASE))?.holder).toBe(
      b.runtime.services.projector.holderId,
    );
    const created = await b
      .as(token)
      .post('/folder')
      .type('form')
      .send({ parentType: 'user', parentId: adminId, name: 'After the handover' });
    expect([created.status, created.body.name]).toEqual([200, 'After the handover']);
    const listed = await b
      .as(token)
      .get('/folder')
      .query({ parentType: 'user', parentId: adminId, name: 'After the handover' });
    expect(listed.body.map((f: { _id: string }) => f._id)).toEqual([created.body._id]);
    const { eventStore, readModel } = b.runtime.services;
    expect(await readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(await eventStore.headPosition());
    const ready = await b.site().get('/readyz');
    expect(ready.body.checks.projector).toMatchObject({ status: 'ok', lease: 'held', lagEvents: 0 });
  });
});
