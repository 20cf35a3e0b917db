import { ok, startApi, type ApiClient, type Listener, type TestUser } from '../support/apiClient';
import type { SseClient, SseMessage } from '../support/sseClient';

/**
 * Progress of large subtree operations while the bulk worker applies them (docs/subtree-operations.md, "Off the event
 * loop"): through HTTP, a copy, a recursive access change, an empty and a delete with `progress=true` show, on the
 * caller's notification stream, `current` values strictly between 0 and the total before the final one. The worker
 * reports every few dozen rows here (BULK_PROGRESS_INTERVAL_MS=0) and takes every subtree event
 * (BULK_WORKER_MIN_FOLDERS=1), so what is seen does not depend on timing.
 */

jest.setTimeout(120_000);

let api: ApiClient;
let listener: Listener;
let admin: TestUser;
const clients: SseClient[] = [];

/** The caller's notification stream, open until the test ends. */
async function stream(): Promise<SseClient> {
  const client = listener.sse('/notification/stream?timeout=60', { 'Service-Token': admin.token });
  clients.push(client);
  await client.opened;
  return client;
}

/** The stream's versions of the record titled `title`, as [total, current, state], once its final one arrived. */
async function progressOf(client: SseClient, title: string): Promise<[number, number, string][]> {
  const mine = (events: SseMessage[]) => events.filter((e) => e.json?.data?.title === title);
  await client.waitFor((events) => mine(events).some((e) => e.json.data.state === 'success'), 30_000);
  return mine(client.events).map((e) => [e.json.data.total, e.json.data.current, e.json.data.state]);
}

/** Versions strictly between the start and the end: the ones the worker's reports made. */
function intermediate(versions: [number, number, string][], total: number): number[] {
  return versions
    .filter(([t, current, state]) => t === total && state === 'active' && current > 0 && current < total)
    .map(([, c]) => c);
}

beforeAll(async () => {
  api = await startApi({ BULK_WORKER_MIN_FOLDERS: '1', BULK_PROGRESS_INTERVAL_MS: '0' });
  admin = await api.createUser('admin');
  listener = await api.listen();
});

afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

afterAll(() => api.close());

describe('progress of subtree operations applied by the bulk worker', () => {
  it('moves during a copy, a recursive access change, an empty and a delete, then ends at the total', async () => {
    const folders = ok(await api.as(admin).get('/folder').query({ parentType: 'user', parentId: admin._id }));
    const privateId = folders.find((f: { name: string }) => f.name === 'Private')._id;
    const tree = await api.buildTree(admin, privateId, 8, 4);

    const copyStream = await stream();
    const copy = ok(
      await api
        .as(admin)
        .post(`/folder/${tree.id}/copy`)
        .query({ parentType: 'folder', parentId: privateId, name: 'copy', progress: 'true' }),
    );
    const copied = await progressOf(copyStream, 'Copying folder tree');
    expect(copied[0]).toEqual([0, 0, 'active']);
    expect(copied.at(-2)).toEqual([tree.entries, tree.entries, 'active']);
    expect(copied.at(-1)).toEqual([tree.entries, tree.entries, 'success']);
    const during = intermediate(copied, tree.entries);
    expect(during.length).toBeGreaterThan(0);
    expect([...during].sort((a, b) => a - b)).toEqual(during);

    const accessStream = await stream();
    const access = JSON.stringify({ users: [{ id: admin._id, level: 2 }], groups: [] });
    ok(await api.as(admin).put(`/folder/${copy._id}/access`).query({ access, recurse: 'true', progress: 'true' }));
    const updated = await progressOf(accessStream, 'Updating permissions');
    const folderCount = (tree.entries + 2 ** 4) / 2;
    expect(updated.at(-1)).toEqual([folderCount, folderCount, 'success']);
    expect(intermediate(updated, folderCount).length).toBeGreaterThan(0);

    const inner = ok(
      await api.as(admin).get('/folder').query({ parentType: 'folder', parentId: copy._id, limit: 1, sort: 'name' }),
    );
    const clearStream = await stream();
    ok(await api.as(admin).delete(`/folder/${copy._id}/contents`).query({ progress: 'true' }));
    const cleared = await progressOf(clearStream, 'Clearing folder copy');
    expect(cleared.at(-1)).toEqual([tree.entries - 1, tree.entries - 1, 'success']);
    expect(intermediate(cleared, tree.entries - 1).length).toBeGreaterThan(0);
    expect((await api.as(admin).get(`/folder/${inner[0]._id}`)).status).toBe(400);

    const deleteStream = await stream();
    ok(await api.as(admin).delete(`/folder/${tree.id}`).query({ progress: 'true' }));
    const deleted = await progressOf(deleteStream, 'Deleting folder tree');
    expect(deleted.at(-1)).toEqual([tree.entries, tree.entries, 'success']);
    expect(intermediate(deleted, tree.entries).length).toBeGreaterThan(0);

    // The versions published while the worker held the file were stored afterwards: the list shows the final ones.
    const listed = ok(await api.as(admin).get('/notification'));
    const titles = listed.map((r: { data: { title: string; state: string } }) => [r.data.title, r.data.state]);
    expect(titles).toEqual(
      expect.arrayContaining([
        ['Copying folder tree', 'success'],
        ['Updating permissions', 'success'],
        ['Clearing folder copy', 'success'],
        ['Deleting folder tree', 'success'],
      ]),
    );
  });
});
