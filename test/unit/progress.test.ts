import { openDatabase, type SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteNotificationStore } from '../../src/infra/readmodel/sqlite/notificationsStore';
import { Notifications } from '../../src/bus/notifications';
import type { NotificationRecord } from '../../src/ports/notificationStore';
import { ProgressService, noProgress, withProgress } from '../../src/bus/progress';
import { AccessDeniedError, RestError, ValidationError } from '../../src/domain/errors';
import { girderTime } from '../../src/domain/time';

const USER = '65f0a1b2c3d4e5f601234567';
const OTHER = '65f0a1b2c3d4e5f601234568';
const T0 = Date.parse('2024-05-01T12:00:00.000Z');

describe('ProgressContext', () => {
  let db: SqliteDatabase;
  let clock: number;
  let notifications: Notifications;
  let progress: ProgressService;
  let writes: NotificationRecord[];
  const rowCount = () => (db.prepare('SELECT COUNT(*) AS n FROM ops_notifications').get() as { n: number }).n;
  const stored = async (userId = USER) => notifications.list({ userId, tokenId: null });

  beforeEach(() => {
    db = openDatabase(':memory:');
    clock = T0;
    notifications = new Notifications(new SqliteNotificationStore(db), () => clock);
    progress = new ProgressService(notifications, { now: () => clock });
    writes = [];
    notifications.changes$.subscribe((record) => writes.push(record));
  });
  afterEach(() => {
    notifications.dispose();
    db.close();
  });

  it('with progress off is a no-op that creates no record at all', async () => {
    const ctx = await progress.start({
      on: false,
      userId: USER,
      title: 'Deleting folder f',
      message: 'Calculating folder size...',
    });
    expect(ctx).toBe(noProgress);
    expect(ctx.on).toBe(false);
    expect(ctx.record).toBeNull();
    await ctx.update({ total: 3 });
    await ctx.update({ increment: 1, message: 'Deleted item a', force: true });
    await ctx.finish();
    await ctx.fail(new RestError('x'));
    expect(rowCount()).toBe(0);
    expect(writes).toEqual([]);
  });

  it('creates an active record with the initial message, current 0, total 0, expiring in an hour', async () => {
    const ctx = await progress.start({
      on: true,
      userId: USER,
      title: 'Deleting folder f',
      message: 'Calculating folder size...',
    });
    const expected = {
      _id: ctx.record!._id,
      type: 'progress',
      userId: USER,
      time: '2024-05-01T12:00:00+00:00',
      updated: '2024-05-01T12:00:00+00:00',
      expires: '2024-05-01T13:00:00+00:00',
      startTime: T0 / 1000,
      updatedTime: T0 / 1000,
      data: {
        title: 'Deleting folder f',
        total: 0,
        current: 0,
        state: 'active',
        message: 'Calculating folder size...',
        estimateTime: true,
        resource: null,
        resourceName: null,
      },
    };
    expect(ctx.record).toEqual(expected);
    expect(ctx.record!._id).toMatch(/^[0-9a-f]{24}$/);
    expect(await stored()).toEqual([expected]);
    expect(writes).toEqual([expected]);
    expect(await stored(OTHER)).toEqual([]);
  });

  it('writes updates at most every 0.5 s but always keeps the latest state in memory', async () => {
    const ctx = await progress.start({ on: true, userId: USER, title: 't', message: 'Calculating folder size...' });
    clock += 100;
    await ctx.update({ total: 3 });
    clock += 100;
    await ctx.update({ increment: 1, message: 'Deleted item a' });
    expect(writes).toHaveLength(1);
    expect(ctx.record!.data).toMatchObject({ total: 3, current: 1, message: 'Deleted item a' });
    expect(ctx.record!.updated).toBe(girderTime(new Date(T0 + 200)));
    expect((await stored())[0].data).toMatchObject({ total: 0, current: 0, message: 'Calculating folder size...' });

    clock += 301; // 501 ms after the last write
    await ctx.update({ increment: 1, message: 'Deleted item b' });
    expect(writes).toHaveLength(2);
    const [row] = await stored();
    expect(row.data).toMatchObject({ total: 3, current: 2, message: 'Deleted item b', state: 'active' });
    expect(row.updated).toBe(girderTime(new Date(T0 + 501)));
    expect(row.updatedTime).toBe((T0 + 501) / 1000);
    expect(row.expires).toBe(girderTime(new Date(T0 + 501 + 3600_000)));
    expect(row.estimatedTotalTime).toBeCloseTo((3 * 0.501) / 2, 5);

    clock += 10;
    await ctx.update({ current: 3, force: true });
    expect(writes).toHaveLength(3);
    expect((await stored())[0].data.current).toBe(3);
  });

  it('finish writes success/Done with the exact final values and a 30 s expiry, once', async () => {
    const ctx = await progress.start({ on: true, userId: USER, title: 't', message: 'm' });
    await ctx.update({ total: 3 });
    for (let i = 0; i < 3; i += 1) await ctx.update({ increment: 1, message: `Deleted item ${i}` });
    clock += 50;
    await ctx.finish();
    await ctx.finish();
    await ctx.update({ current: 99, force: true });
    expect(writes).toHaveLength(2);
    const [row] = await stored();
    expect(row.data).toEqual({
      title: 't',
      total: 3,
      current: 3,
      state: 'success',
      message: 'Done',
      estimateTime: true,
      resource: null,
      resourceName: null,
    });
    expect(row.expires).toBe(girderTime(new Date(T0 + 50 + 30_000)));
    expect(row.updated).toBe(girderTime(new Date(T0 + 50)));
  });

  it.each([
    [new RestError('Invalid folder id (x).'), 'Error: Invalid folder id (x).'],
    [
      new ValidationError('A folder with that name already exists here.', 'name'),
      'Error: A folder with that name already exists here.',
    ],
    [new AccessDeniedError('Write access denied for folder x (user y).'), 'Error'],
    [new TypeError('boom'), 'Error'],
  ])('fail(%p) writes state error with message %p', async (error, message) => {
    const ctx = await progress.start({ on: true, userId: USER, title: 't', message: 'm' });
    clock += 5;
    await ctx.fail(error);
    const [row] = await stored();
    expect(row.data.state).toBe('error');
    expect(row.data.message).toBe(message);
    expect(row.expires).toBe(girderTime(new Date(T0 + 5 + 30_000)));
  });

  it('withProgress always finishes or fails, returning the result or rethrowing', async () => {
    const services = { progress };
    const result = await withProgress(services, { on: true, userId: USER, title: 'ok', message: 'm' }, async (p) => {
      await p.update({ total: 2, current: 2 });
      return 42;
    });
    expect(result).toBe(42);
    const error = new RestError('nope');
    await expect(
      withProgress(services, { on: true, userId: USER, title: 'bad', message: 'm' }, async () => {
        throw error;
      }),
    ).rejects.toBe(error);
    const rows = await stored();
    expect(rows.map((r) => [r.data.title, r.data.state, r.data.message, r.data.current])).toEqual([
      ['ok', 'success', 'Done', 2],
      ['bad', 'error', 'Error: nope', 0],
    ]);
    await expect(withProgress(services, { on: false, userId: USER, title: 'off' }, async (p) => p.on)).resolves.toBe(
      false,
    );
    expect(await stored()).toHaveLength(2);
  });

  it('withProgress returns what the task did when the final state cannot be written, and logs it', async () => {
    const logged: unknown[] = [];
    const logger = { error: (fields: unknown) => logged.push(fields) } as unknown as import('pino').Logger;
    const busy = new Error('another writer held the database');
    const result = await withProgress(
      { progress, logger },
      { on: true, userId: USER, title: 'made', message: 'm' },
      async () => {
        // The change is made; then the store refuses the final write.
        jest.spyOn(notifications, 'save').mockRejectedValueOnce(busy);
        return 'made';
      },
    );
    expect(result).toBe('made');
    expect(logged).toEqual([{ err: busy }]);
  });

  it('throttles a burst of updates in real time to a few writes with an exact final state', async () => {
    const realtime = new ProgressService(notifications);
    const started = Date.now();
    const ctx = await realtime.start({ on: true, userId: USER, title: 'burst', message: 'Calculating folder size...' });
    await ctx.update({ total: 1000 });
    for (let i = 1; i <= 1000; i += 1) await ctx.update({ increment: 1, message: `Copied item ${i}` });
    const elapsed = Date.now() - started;
    await ctx.finish();
    // One write on start, at most one per 0.5 s while updating, one on finish.
    expect(writes.length).toBeLessThanOrEqual(2 + Math.floor(elapsed / 500) + 1);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    const [row] = await stored();
    expect(row.data).toMatchObject({ total: 1000, current: 1000, state: 'success', message: 'Done' });
    expect(row.estimatedTotalTime).toBeGreaterThanOrEqual(0);
  });

  it('lists by updated ascending, filters by since, hides expired records and sweeps them', async () => {
    const a = await progress.start({ on: true, userId: USER, title: 'a', message: 'm' });
    clock += 1000;
    const b = await progress.start({ on: true, userId: USER, title: 'b', message: 'm' });
    clock += 1000;
    await a.update({ current: 1, force: true }); // a is now the most recently updated
    expect((await stored()).map((r) => r.data.title)).toEqual(['b', 'a']);
    expect((await notifications.list({ userId: USER, tokenId: null }, T0 + 1000)).map((r) => r.data.title)).toEqual([
      'a',
    ]);
    expect(await notifications.list({ userId: USER, tokenId: null }, T0 + 2000)).toEqual([]);

    await b.finish(); // expires 30 s from now
    clock += 30_000;
    expect((await stored()).map((r) => r.data.title)).toEqual(['a']);
    expect(rowCount()).toBe(2);
    expect(await notifications.sweep()).toBe(1);
    expect(rowCount()).toBe(1);
    clock += 3600_000;
    expect(await stored()).toEqual([]);
    // The next write sweeps on its way (at most once a minute).
    await progress.start({ on: true, userId: OTHER, title: 'c', message: 'm' });
    expect(rowCount()).toBe(1);
  });

  it('keeps token-owned records apart from user-owned ones', async () => {
    await progress.start({ on: true, userId: null, tokenId: 'tokenhash', title: 'anon', message: 'm' });
    await progress.start({ on: true, userId: USER, title: 'user', message: 'm' });
    const byToken = await notifications.list({ userId: null, tokenId: 'tokenhash' });
    expect(byToken.map((r) => [r.data.title, r.tokenId, r.userId])).toEqual([['anon', 'tokenhash', undefined]]);
    expect((await stored()).map((r) => r.data.title)).toEqual(['user']);
    await expect(progress.start({ on: true, userId: null, title: 'nobody' })).rejects.toThrow(
      'needs a userId or a tokenId',
    );
  });

  it('keeps writes in call order even when updates are not awaited', async () => {
    const ctx = await progress.start({ on: true, userId: USER, title: 't', message: 'm' });
    clock += 600;
    void ctx.update({ current: 1 });
    clock += 600;
    void ctx.update({ current: 2 });
    await ctx.finish();
    expect(writes.map((w) => [w.data.current, w.data.state])).toEqual([
      [0, 'active'],
      [1, 'active'],
      [2, 'active'],
      [2, 'success'],
    ]);
  });
});
