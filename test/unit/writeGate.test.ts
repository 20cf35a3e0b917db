import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WriteGate, gateWrites } from '../../src/infra/sqlite/writeGate';
import { NoWaitWrites } from '../../src/infra/sqlite/noWaitWrites';
import { openDatabase, type SqliteDatabase } from '../../src/infra/sqlite/openDatabase';

/**
 * The write gate of the embedded SQLite file (src/infra/sqlite/writeGate.ts): while bulk work holds it, gated writes
 * wait (asynchronously) and then run in arrival order; without bulk work they run at once. Over the event loop's
 * connection, a write that finds another connection holding the write lock waits asynchronously too.
 */

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('WriteGate', () => {
  it('runs a write at once when no bulk work holds the gate', async () => {
    const gate = new WriteGate();
    const order: string[] = [];
    const written = gate.run(() => order.push('write'));
    // Started in the same synchronous step, before anything else could begin a bulk transaction.
    expect(order).toEqual(['write']);
    await written;
    expect(gate.held).toBe(false);
  });

  it('holds writes back until the bulk work ends, then runs them in arrival order', async () => {
    const gate = new WriteGate();
    const order: string[] = [];
    const bulk = deferred();
    const held = gate.hold(async () => {
      order.push('bulk started');
      await bulk.promise;
      order.push('bulk done');
      return 42;
    });
    expect(gate.held).toBe(true);
    const writes = [gate.run(() => order.push('append')), gate.run(() => order.push('lease renewal'))];
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['bulk started']);
    bulk.resolve();
    expect(await held).toBe(42);
    await Promise.all(writes);
    expect(order).toEqual(['bulk started', 'bulk done', 'append', 'lease renewal']);
    expect(gate.held).toBe(false);
  });

  it('releases the gate when the bulk work fails', async () => {
    const gate = new WriteGate();
    await expect(gate.hold(async () => Promise.reject(new Error('rolled back')))).rejects.toThrow('rolled back');
    expect(gate.held).toBe(false);
    expect(await gate.run(() => 'written')).toBe('written');
  });

  it('runs bulk works one after the other', async () => {
    const gate = new WriteGate();
    const order: string[] = [];
    const first = deferred();
    const one = gate.hold(async () => {
      order.push('first started');
      await first.promise;
      order.push('first done');
    });
    const two = gate.hold(async () => void order.push('second started'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['first started']);
    first.resolve();
    await Promise.all([one, two]);
    expect(order).toEqual(['first started', 'first done', 'second started']);
  });
});

describe("WriteGate over the event loop's connection (NoWaitWrites)", () => {
  let dir: string;
  let mine: SqliteDatabase;
  let other: SqliteDatabase;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'write-gate-'));
    mine = openDatabase(path.join(dir, 'file.sqlite'));
    other = openDatabase(path.join(dir, 'file.sqlite'));
    mine.exec('CREATE TABLE rows (value TEXT NOT NULL)');
  });

  afterEach(() => {
    mine.close();
    other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("waits for another connection's write lock without blocking the event loop, then writes", async () => {
    const gate = new WriteGate(new NoWaitWrites(mine));
    const insert = mine.prepare('INSERT INTO rows (value) VALUES (?)');
    other.exec('BEGIN IMMEDIATE');
    const order: string[] = [];
    const written = gate.run(() => insert.run('mine')).then(() => order.push('written'));
    // The loop keeps turning while the write waits: timers and other work run.
    await new Promise((resolve) => setTimeout(resolve, 20));
    order.push('loop turned');
    expect(gate.held).toBe(true);
    // A writer arriving meanwhile waits behind the one that is trying again.
    const later = gate.run(() => insert.run('later')).then(() => order.push('later written'));
    other.exec('COMMIT');
    await Promise.all([written, later]);
    expect(order).toEqual(['loop turned', 'written', 'later written']);
    expect(mine.prepare('SELECT value FROM rows ORDER BY rowid').pluck().all()).toEqual(['mine', 'later']);
    // The connection's own busy timeout is back for everything outside the gate.
    expect(mine.pragma('busy_timeout', { simple: true })).toBe(5000);
  });

  it('passes errors other than a busy lock through at once', async () => {
    const gate = new WriteGate(new NoWaitWrites(mine));
    // Matched by its fields: a SqliteError is not always an instance of the test realm's Error.
    await expect(gate.run(() => mine.exec('INSERT INTO missing VALUES (1)'))).rejects.toMatchObject({
      code: 'SQLITE_ERROR',
      message: expect.stringContaining('no such table'),
    });
    expect(gate.held).toBe(false);
  });
});

describe('gateWrites', () => {
  it('gates the named methods of an object in place and leaves the others alone', async () => {
    const gate = new WriteGate();
    const store = {
      rows: [] as string[],
      async append(row: string) {
        this.rows.push(row);
        return this.rows.length;
      },
      async read() {
        return [...this.rows];
      },
    };
    const gated = gateWrites(store, ['append'], gate);
    expect(gated).toBe(store);
    const bulk = deferred();
    const held = gate.hold(() => bulk.promise);
    const appended = store.append('during bulk');
    expect(await store.read()).toEqual([]);
    bulk.resolve();
    await held;
    expect(await appended).toBe(1);
    expect(await store.read()).toEqual(['during bulk']);
  });
});
