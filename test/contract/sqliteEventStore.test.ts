import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite/sqliteEventStore';
import { openDatabase, type SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import type { NewEvent, RecordedEvent, SubscriptionItem } from '../../src/ports/eventStore';
import { eventStoreContract } from './eventStoreContract';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-es-'));
}

for (const [name, options] of [
  ['SqliteEventStore (temp file)', {}],
  // How the service runs it: group commits on a worker thread (appendWorker.ts), the same semantics.
  ['SqliteEventStore (temp file, append worker)', { appendWorker: true }],
] as const) {
  eventStoreContract(name, async () => {
    const dir = tempDir();
    const db = openDatabase(path.join(dir, 'events.sqlite'));
    const store = new SqliteEventStore(db, options);
    return {
      store,
      cleanup: async () => {
        await store.dispose();
        db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  });
}

const ev = (type: string, data: unknown = {}): NewEvent => ({
  type,
  data,
  metadata: { userId: null, requestId: null, correlationId: null, causationId: null, at: new Date().toISOString() },
});

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('SqliteEventStore specifics', () => {
  let dir: string;
  let file: string;
  let db: SqliteDatabase;
  let store: SqliteEventStore;

  beforeEach(() => {
    dir = tempDir();
    file = path.join(dir, 'events.sqlite');
    db = openDatabase(file);
    store = new SqliteEventStore(db);
  });
  afterEach(async () => {
    await store.dispose();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts positions at 1 and reports head 0 when empty', async () => {
    expect(await store.headPosition()).toBe(0n);
    const none = await store.appendToStream('a-1', [], { expectedState: 'no_stream' });
    expect(none).toEqual({ nextExpectedRevision: -1n, position: 0n });
    expect(await store.appendToStream('a-1', [ev('A')], { expectedState: 'no_stream' })).toEqual({
      nextExpectedRevision: 0n,
      position: 1n,
    });
    expect(
      await store.appendToStreams([{ streamId: 'b-1', expectedState: 'any', events: [ev('B'), ev('C')] }]),
    ).toEqual({
      position: 3n,
    });
    expect(await store.headPosition()).toBe(3n);
    expect(await store.appendToStream('c-1', [], { expectedState: 'no_stream' })).toEqual({
      nextExpectedRevision: -1n,
      position: 3n,
    });
    expect(await store.appendToStreams([])).toEqual({ position: 3n });
    expect((await collect(store.readAll())).map((e) => e.position)).toEqual([1n, 2n, 3n]);
  });

  it('has the append worker checkpoint the WAL into the database file soon after its commits', async () => {
    const withWorker = new SqliteEventStore(db, { appendWorker: true });
    for (let i = 0; i < 20; i++) await withWorker.appendToStream(`w-${i}`, [ev('A')], { expectedState: 'no_stream' });
    // Far below SQLite's automatic threshold (1,000 pages): only the worker's own checkpoints move these pages.
    // The database file alone, copied without its WAL: what a checkpoint has written there.
    const inFile = () => {
      const copy = path.join(dir, 'file-only.sqlite');
      fs.copyFileSync(file, copy);
      const fileOnly = new Database(copy);
      const hasTable = fileOnly.prepare("SELECT 1 FROM sqlite_master WHERE name = 'es_events'").get() !== undefined;
      const count = hasTable ? fileOnly.prepare('SELECT count(*) FROM es_events').pluck().get() : 0;
      fileOnly.close();
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(copy + suffix, { force: true });
      return count;
    };
    const deadline = Date.now() + 5000;
    while (inFile() !== 20 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(inFile()).toBe(20);
    await withWorker.dispose();
  });

  it('leaves the events of other types in SQL on a read of some types, and reports what it passed over', async () => {
    const types = ['A', 'B', 'A', 'C', 'B', 'A', 'C', 'C'];
    await store.appendToStreams([{ streamId: 's-1', expectedState: 'any', events: types.map((type) => ev(type)) }]);
    const skipped: [number, bigint][] = [];
    const read = store.readAll({
      fromPosition: 1n,
      onlyTypes: { types: ['A', 'B'], onSkipped: (count, through) => skipped.push([count, through]) },
    });
    expect((await collect(read)).map((e) => [e.position, e.type])).toEqual([
      [2n, 'B'],
      [3n, 'A'],
      [5n, 'B'],
      [6n, 'A'],
    ]);
    // Everything after position 1 is delivered or counted, the tail of C events included.
    expect(skipped).toEqual([[3, 8n]]);
  });

  it('keeps its tables under the es_ prefix, next to other tables in the same database', async () => {
    db.exec('CREATE TABLE IF NOT EXISTS rm_folders (id TEXT PRIMARY KEY)');
    const again = new SqliteEventStore(db);
    await again.appendToStream('a-1', [ev('A')], { expectedState: 'no_stream' });
    expect(await store.streamRevision('a-1')).toBe(0n);
    const tables = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all()
      .map((t) => t.name)
      .filter((name) => name !== 'rm_folders');
    expect(tables.length).toBeGreaterThan(0);
    for (const name of tables) expect(name).toMatch(/^es_/);
    await again.dispose();
  });

  it('wakes live subscriptions at once on an append through this instance (no poll delay)', async () => {
    const sub = store.subscribeToAll();
    const latencies: number[] = [];
    let appendedAt = 0;
    const loop = (async () => {
      for await (const item of sub) {
        if (item.kind !== 'event') continue;
        latencies.push(Date.now() - appendedAt);
        if (latencies.length === 5) break;
      }
    })();
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      appendedAt = Date.now();
      await store.appendToStream('live-1', [ev('L')], { expectedState: 'any' });
    }
    await loop;
    await sub.unsubscribe();
    expect(Math.max(...latencies)).toBeLessThan(50);
  });

  it('delivers commits made through another connection to live subscriptions (poll)', async () => {
    const otherDb = openDatabase(file);
    const other = new SqliteEventStore(otherDb);
    try {
      const sub = store.subscribeToAll();
      const items: SubscriptionItem[] = [];
      const loop = (async () => {
        for await (const item of sub) {
          items.push(item);
          if (item.kind === 'event') break;
        }
      })();
      // Let the subscription catch up and start waiting, then commit through the other connection: no in-process
      // notification reaches this store, only its poll can see the commit.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await other.appendToStream('x-1', [ev('FromElsewhere')], { expectedState: 'any' });
      const started = Date.now();
      await loop;
      expect(Date.now() - started).toBeLessThan(1000);
      expect(items.map((i) => (i.kind === 'event' ? i.event.type : i.kind))).toEqual(['caughtUp', 'FromElsewhere']);
      await sub.unsubscribe();
    } finally {
      await other.dispose();
      otherDb.close();
    }
  });

  it.each([
    ['on the calling thread', 'in-place'],
    ['on the append worker thread', 'worker'],
  ])(
    'keeps every acknowledged append when the writing process is killed with SIGKILL (commits %s)',
    async (_how, mode) => {
      const streamId = 'durable-1';
      const fixture = path.join(__dirname, 'fixtures', 'appendForever.ts');
      const child = spawn(process.execPath, ['-r', require.resolve('tsx/cjs'), fixture, file, streamId, mode], {
        cwd: path.join(__dirname, '..', '..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const acknowledged: bigint[] = [];
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
        child.on('exit', (code, signal) => resolve(signal ?? code)),
      );

      // Meanwhile this process follows the log through a live subscription (another connection, seen via the poll).
      const sub = store.subscribeToAll({ streamPrefixes: ['durable-'] });
      const delivered: RecordedEvent[] = [];
      // The last acknowledged revision, once known (set below while the subscription runs).
      const wanted: { revision?: bigint } = {};
      let reachedTarget!: () => void;
      const followed = new Promise<void>((resolve) => (reachedTarget = resolve));
      const follow = (async () => {
        for await (const item of sub) {
          if (item.kind !== 'event') continue;
          delivered.push(item.event);
          if (wanted.revision !== undefined && item.event.revision >= wanted.revision) reachedTarget();
        }
      })();

      let timeout: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve, reject) => {
        let buffered = '';
        child.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString();
          const lines = buffered.split('\n');
          buffered = lines.pop()!;
          for (const line of lines) acknowledged.push(BigInt(line));
          if (acknowledged.length >= 200 && child.exitCode === null && !child.killed) {
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.on('exit', () => reject(new Error(`writer exited early after ${acknowledged.length} acks: ${stderr}`)));
        timeout = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`timed out after ${acknowledged.length} acks: ${stderr}`));
        }, 15000);
      }).finally(() => clearTimeout(timeout));
      expect(await exited).toBe('SIGKILL');

      expect(acknowledged.slice(0, 200)).toEqual(Array.from({ length: 200 }, (_, i) => BigInt(i)));
      const lastAck = acknowledged[acknowledged.length - 1];

      // Reopen the file from scratch (recovering the WAL the killed writer left behind).
      const reopenedDb = openDatabase(file);
      const reopened = new SqliteEventStore(reopenedDb);
      try {
        const revision = await reopened.streamRevision(streamId);
        expect(revision).not.toBe('no_stream');
        expect(revision as bigint).toBeGreaterThanOrEqual(lastAck);
        const events = await collect(reopened.readStream(streamId));
        const revisions = new Set(events.map((e) => e.revision));
        for (const ack of acknowledged) expect(revisions.has(ack)).toBe(true);
        expect(events.map((e) => (e.data as { n: number }).n)).toEqual(events.map((_, i) => i));
      } finally {
        await reopened.dispose();
        reopenedDb.close();
      }

      // The subscription saw every acknowledged event too, in order.
      wanted.revision = lastAck;
      if (delivered.some((e) => e.revision >= lastAck)) reachedTarget();
      let followTimer: NodeJS.Timeout | undefined;
      await Promise.race([followed, new Promise((resolve) => (followTimer = setTimeout(resolve, 3000)))]);
      clearTimeout(followTimer);
      await sub.unsubscribe();
      await follow;
      expect(delivered.length).toBeGreaterThan(Number(lastAck));
      expect(delivered.slice(0, acknowledged.length).map((e) => e.revision)).toEqual(acknowledged);
    },
  );
});
