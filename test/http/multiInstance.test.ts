import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { folderStream } from '../../src/domain/folder';
import type { SseClient } from '../support/sseClient';
import { startApi, type ApiClient, type Listener, type TestUser } from '../support/apiClient';

/**
 * Three service instances on one DATA_DIR, as three processes sharing one event log and one read model (in the
 * http-mongo project their read models share one MongoDB stand-in): one holds the projector lease, two stand by.
 * Whichever instance a write goes through and whichever serves a subscriber, every subscriber gets every event of its
 * stream exactly once, in log order; `Last-Event-ID` resumes on another instance without a gap or a duplicate, also
 * across a takeover of the lease; and progress notifications written by one instance are listed and streamed by the
 * others.
 */

const env = { PROJECTOR_LEASE_TTL_MS: '900' };

interface Instance {
  api: ApiClient;
  listener: Listener;
}

describe('three instances on one DATA_DIR', () => {
  let dataDir: string;
  let instances: Instance[];
  let admin: TestUser;
  let folderId: string;
  const subscribers: SseClient[] = [];

  const start = async (): Promise<Instance> => {
    const api = await startApi(env, { dataDir });
    return { api, listener: await api.listen() };
  };
  const subscribe = (instance: Instance, headers: Record<string, string> = {}, query = 'since=0') => {
    const client = instance.listener.sse(`/folder/${folderId}/events?${query}`, {
      'Girder-Token': admin.token,
      ...headers,
    });
    subscribers.push(client);
    return client;
  };
  const setMeta = async (instance: Instance, value: number) => {
    const res = await instance.api
      .anonymous()
      .put(`/folder/${folderId}/metadata`)
      .set('Girder-Token', admin.token)
      .set('Content-Type', 'application/json')
      .send({ step: value });
    expect(res.status).toBe(200);
    expect(res.body.metadata.step).toBe(value);
  };
  /** The folder stream's positions, straight from the log. */
  const logPositions = async () => {
    const out: string[] = [];
    for await (const event of instances[0].api.runtime.services.eventStore.readStream(folderStream(folderId)))
      out.push(event.position.toString());
    return out;
  };
  const ids = (client: SseClient) => client.events.map((event) => event.id);
  /**
   * The instances' roles once one of them holds the lease: with a 900 ms lease, a renewal late on a loaded machine
   * leaves every instance standing by for a moment until one takes the lease again (what this file tests).
   */
  const settledRoles = async () => {
    const deadline = Date.now() + 5000;
    for (;;) {
      const roles = instances.map((i) => i.api.runtime.services.projector.role);
      if (roles.filter((role) => role === 'holder').length === 1 || Date.now() > deadline) return roles;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'multi-instance-'));
    instances = [await start(), await start(), await start()];
    admin = await instances[0].api.createUser('admin');
    const created = await instances[1].api
      .anonymous()
      .post('/folder')
      .set('Girder-Token', admin.token)
      .type('form')
      .send({ parentType: 'user', parentId: admin._id, name: 'Watched everywhere' });
    expect(created.status).toBe(200);
    folderId = created.body._id;
  });
  afterAll(async () => {
    for (const client of subscribers) client.close();
    for (const instance of instances.reverse()) await instance.api.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers every event of the stream to a subscriber on each instance, exactly once and in log order, whoever wrote it', async () => {
    expect((await settledRoles()).sort()).toEqual(['holder', 'standby', 'standby']);
    const clients = instances.map((instance) => subscribe(instance));
    await Promise.all(clients.map((client) => client.opened));
    for (let step = 1; step <= 9; step++) await setMeta(instances[step % 3], step);
    const expected = await logPositions();
    expect(expected).toHaveLength(10);
    for (const client of clients) {
      await client.waitFor((events) => events.at(-1)?.id === expected.at(-1), 5000);
      expect(ids(client)).toEqual(expected);
      expect(client.events.map((e) => e.json.data.meta?.step ?? null)).toEqual([null, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
    for (const client of clients) client.close();
  });

  it("counts a caller's new group and revoked token on the next request of every instance, whichever wrote them", async () => {
    const bob = await instances[0].api.createUser('bobby');
    const admin0 = instances[0].api.as(admin);
    const group = await admin0.post('/group').type('form').send({ name: 'Readers' });
    expect(group.status).toBe(200);
    const shared = await admin0
      .post('/folder')
      .type('form')
      .send({ parentType: 'user', parentId: admin._id, name: 'For readers', public: 'false' });
    expect(shared.status).toBe(200);
    const access = JSON.stringify({ users: [], groups: [{ id: group.body._id, level: 0 }] });
    expect((await admin0.put(`/folder/${shared.body._id}/access`).type('form').send({ access })).status).toBe(200);

    // Every instance resolves bob once before the changes (so any per-process caching has seen him).
    for (const { api } of instances) {
      expect((await api.as(bob).get('/user/me')).body).toMatchObject({ login: 'bobby', groups: [] });
      const denied = await api.as(bob).get(`/folder/${shared.body._id}`);
      expect(denied.status).toBe(403);
      expect(denied.body.message).toBe(`Read access denied for folder ${shared.body._id} (user ${bob._id}).`);
    }

    // Both changes go through standbys, so the lease holder's projection writes what the others must notice.
    await settledRoles();
    const [standbyA, standbyB] = instances.filter((i) => i.api.runtime.services.projector.role === 'standby');
    const added = await standbyA.api
      .as(admin)
      .post(`/group/${group.body._id}/invitation`)
      .type('form')
      .send({ userId: bob._id, force: 'true' });
    expect(added.status).toBe(200);
    for (const { api } of instances) {
      expect((await api.as(bob).get('/user/me')).body.groups).toEqual([group.body._id]);
      expect((await api.as(bob).get(`/folder/${shared.body._id}`)).status).toBe(200);
    }

    expect((await standbyB.api.as(bob).delete('/user/authentication')).status).toBe(200);
    for (const { api } of instances) {
      expect((await api.as(bob).get('/user/me')).body).toBeNull();
      const anonymous = await api.as(bob).get(`/folder/${shared.body._id}`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.message).toBe(`Read access denied for folder ${shared.body._id} (user None).`);
    }
  });

  it('resumes with Last-Event-ID on another instance, and keeps delivering across a takeover of the lease', async () => {
    const before = await logPositions();
    await settledRoles();
    const holderAt = instances.findIndex((i) => i.api.runtime.services.projector.role === 'holder');
    const [standbyA, standbyB] = instances.filter((_, at) => at !== holderAt);
    // A subscriber on a standby that has seen part of the stream, and drops.
    const first = subscribe(standbyA);
    await first.waitFor((events) => events.length === before.length);
    first.close();
    const lastSeen = first.lastId;
    // Meanwhile writes go on, through every instance.
    for (let step = 10; step <= 12; step++) await setMeta(instances[step % 3], step);
    // It reconnects to the other standby (EventSource sends Last-Event-ID), and keeps listening there.
    const resumed = subscribe(standbyB, { 'Last-Event-ID': lastSeen }, '');
    // The lease holder goes away; a standby takes over and projects on; writes go through the survivors.
    const [holder] = instances.splice(holderAt, 1);
    await holder.api.close();
    const deadline = Date.now() + 5000;
    while (!instances.some((i) => i.api.runtime.services.projector.role === 'holder')) {
      if (Date.now() > deadline) throw new Error('no instance took the lease over');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (let step = 13; step <= 16; step++) await setMeta(instances[step % 2], step);
    const all = await logPositions();
    await resumed.waitFor((events) => events.at(-1)?.id === all.at(-1), 8000);
    // No gap, no duplicate: the first connection's events and the resumed one's are the log's sequence.
    expect([...ids(first), ...ids(resumed)]).toEqual(all);
    expect(resumed.events.map((e) => e.json.data.meta.step)).toEqual([10, 11, 12, 13, 14, 15, 16]);
  });

  it('lists and streams through every instance the progress notifications one of them writes', async () => {
    const [writer, reader] = instances;
    const stream = reader.listener.sse('/notification/stream?timeout=10', { 'Girder-Token': admin.token });
    subscribers.push(stream);
    await stream.opened;
    const doomed = await writer.api
      .anonymous()
      .post('/folder')
      .set('Girder-Token', admin.token)
      .type('form')
      .send({ parentType: 'folder', parentId: folderId, name: 'doomed' });
    expect(doomed.status).toBe(200);
    const deleted = await writer.api
      .anonymous()
      .delete(`/folder/${doomed.body._id}`)
      .query({ progress: true })
      .set('Girder-Token', admin.token);
    expect(deleted.status).toBe(200);

    const listed = await reader.api.anonymous().get('/notification').set('Girder-Token', admin.token);
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0]).toMatchObject({
      type: 'progress',
      userId: admin._id,
      data: { title: 'Deleting folder doomed', state: 'success', message: 'Done' },
    });
    const fromWriter = await writer.api.anonymous().get('/notification').set('Girder-Token', admin.token);
    expect(fromWriter.body).toEqual(listed.body);

    await stream.waitFor((events) => events.some((e) => e.json?.data?.state === 'success'), 5000);
    const streamed = stream.events.filter((e) => e.json._id === listed.body[0]._id);
    expect(streamed.at(-1)!.json).toMatchObject({
      _id: listed.body[0]._id,
      updated: listed.body[0].updated,
      data: listed.body[0].data,
    });
    // Each version once: no record was announced twice with the same content.
    expect(new Set(streamed.map((e) => e.data.replace(/"_girderTime":\d+,?/, ''))).size).toBe(streamed.length);
  });
});
