import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Config } from '../config';
import type { EventStore, RecordedEvent } from '../ports/eventStore';
import type { Projection } from '../projections/projection';
import { openDatabase, type SqliteDatabase } from '../infra/sqlite/openDatabase';
import { SqliteEventStore } from '../infra/eventstore/sqlite/sqliteEventStore';
import { SqliteReadModel } from '../infra/readmodel/sqlite/sqliteReadModel';
import { MongoReadModel } from '../infra/readmodel/mongodb/mongoReadModel';
import { mongoStandInMode } from '../infra/readmodel/createReadModel';
import { Projector, READ_MODELS_CHECKPOINT } from '../projections/projector';
import { readModelProjection } from '../projections';
import { createEventStore } from './createEventStore';
import type { ReadModelComparison } from '../ports/readModelCheck';
import { DB_FILE, openCommandStores } from './stores';
import { ownValue } from '../domain/ownMap';

/** Events per commit while replaying into the scratch copy. */
const BATCH_SIZE = 2000;
/** Longest value printed in a difference. */
const MAX_VALUE = 200;
/** How often verify reads the live MongoDB read models again when the projector moved while it read them. */
const QUIET_ATTEMPTS = 20;

export type VerifyResult = ReadModelComparison;

/**
 * `npm run cli -- verify`: checks that the live read models of the configured deployment (EVENT_STORE, READ_MODEL)
 * are exactly what replaying the event log produces, without touching them (the service may keep running).
 *
 * SQLite read models:
 *  1. a consistent snapshot of DATA_DIR's SQLite file (log and read models together) goes to a scratch file, through
 *     SQLite's online backup from a read-only connection;
 *  2. the snapshot's read models are dumped (`readModel.dump()`): that is the live state;
 *  3. the snapshot's read models are emptied and the log (the snapshot's, or KurrentDB's) is replayed into them up to
 *     the position they had reached (a projector that lagged behind the log at snapshot time is not a difference);
 *  4. the two dumps are compared table by table and row by row (rows paired by primary key).
 * MongoDB read models:
 *  1. the current generation is dumped, with its checkpoint read before and after (again while they differ: the live
 *     projector applied an event meanwhile);
 *  2. the log is replayed up to that checkpoint into a scratch database next to the live one (`<db>_verify_<random>`,
 *     dropped afterwards), which is dumped;
 *  3. the dumps are compared as above (documents paired by `_id`).
 * Prints every difference and returns exit code 1 when there is any, 0 when the read models match.
 */
export async function verifyReadModels(
  config: Config,
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
  projection: Projection = readModelProjection,
): Promise<number> {
  if (args.length > 0) throw new Error(`verify takes no arguments, got: ${args.join(' ')}.`);
  const { result, where } = await compareReadModelsWithLog(config, projection);
  out.write(
    `Verified the read models in ${where} against a replay of ${result.events} events (up to position ${result.position}).\n`,
  );
  for (const line of result.differences) out.write(`${line}\n`);
  const { stopped } = result;
  if (stopped)
    out.write(
      `projection stopped at position ${stopped.position} of ${stopped.head}: ${stopped.error.name}: ${stopped.error.message}\n`,
    );
  if (result.differences.length === 0 && !stopped) {
    out.write('The read models match the event log.\n');
    return 0;
  }
  if (result.differences.length > 0) {
    out.write(
      `${result.differences.length} difference${result.differences.length === 1 ? '' : 's'} between the live read models and the replay.\n`,
    );
  }
  return 1;
}

/**
 * The comparison of verify (above) without its printout: what differs, how many events were replayed, and where the
 * read models live. `PUT /system/check` reports it too.
 */
export function compareReadModelsWithLog(
  config: Config,
  projection: Projection = readModelProjection,
): Promise<{ result: VerifyResult; where: string }> {
  return config.readModel === 'sqlite' && mongoStandInMode() === null
    ? verifySqlite(config, projection)
    : verifyMongo(config, projection);
}

/**
 * Applies the events after the checkpoint `upTo`, one transaction each through `apply`, to find one the projections
 * cannot get past: a live projector stopped there (or will). Events that apply are a projector that merely lags.
 */
async function firstFailureAfter(
  store: EventStore,
  upTo: bigint,
  apply: (event: RecordedEvent) => Promise<unknown>,
): Promise<VerifyResult['stopped']> {
  const head = await store.headPosition();
  for await (const event of store.readAll({ fromPosition: upTo })) {
    try {
      await apply(event);
    } catch (error) {
      return { position: event.position, head, error: error instanceof Error ? error : new Error(String(error)) };
    }
  }
  return undefined;
}

async function verifySqlite(config: Config, projection: Projection): Promise<{ result: VerifyResult; where: string }> {
  const file = path.join(config.dataDir, DB_FILE);
  if (!fs.existsSync(file)) throw new Error(`No data to verify: ${file} does not exist (set DATA_DIR).`);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-verify-'));
  try {
    const snapshotFile = path.join(scratch, DB_FILE);
    const live = new Database(file, { readonly: true, fileMustExist: true });
    try {
      await live.backup(snapshotFile);
    } finally {
      live.close();
    }
    const db = openDatabase(snapshotFile);
    try {
      // The log: the snapshot's own (taken together with the read models), or KurrentDB's.
      const store = config.eventStore === 'sqlite' ? new SqliteEventStore(db) : await createEventStore(config, null);
      return { result: await compareWithReplay(db, store, projection), where: config.dataDir };
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Dumps the read models of `db`, replays the log into them up to their checkpoint, and compares the two dumps. */
async function compareWithReplay(
  db: SqliteDatabase,
  store: EventStore = new SqliteEventStore(db),
  projection: Projection = readModelProjection,
): Promise<VerifyResult> {
  const readModel = new SqliteReadModel(db);
  try {
    const live = await readModel.dump();
    const upTo = await readModel.checkpoint(READ_MODELS_CHECKPOINT);
    await readModel.reset();
    const projector = new Projector(store, readModel, projection);
    let events = 0;
    let open = 0;
    for await (const event of store.readAll()) {
      if (event.position > upTo) break;
      if (open === 0) db.exec('BEGIN IMMEDIATE');
      await projector.applyEvent(event);
      events++;
      if (++open >= BATCH_SIZE) {
        db.exec('COMMIT');
        open = 0;
      }
    }
    if (open > 0) db.exec('COMMIT');
    const replayed = await readModel.dump();
    const differences = diffDumps((table) => sqliteKeyColumns(db, table), live, replayed);
    const stopped = await firstFailureAfter(store, upTo, (event) => projector.applyEvent(event));
    return { differences, events, position: upTo, ...(stopped ? { stopped } : {}) };
  } finally {
    await store.dispose();
    await readModel.dispose();
  }
}

async function verifyMongo(config: Config, projection: Projection): Promise<{ result: VerifyResult; where: string }> {
  const stores = await openCommandStores(config, 'verify');
  try {
    const { eventStore, readModel } = stores;
    if (!(readModel instanceof MongoReadModel)) throw new Error('verify: the configured read model is not MongoDB.');
    return { result: await compareMongoWithReplay(eventStore, readModel, projection), where: stores.describe() };
  } finally {
    await stores.close();
  }
}

/** Dumps the live MongoDB read models at a quiet moment, replays the log into a scratch database, compares. */
export async function compareMongoWithReplay(
  store: EventStore,
  readModel: MongoReadModel,
  projection: Projection = readModelProjection,
): Promise<VerifyResult> {
  let live: Record<string, unknown[]> | null = null;
  let upTo = 0n;
  for (let attempt = 1; live === null; attempt++) {
    const before = await readModel.checkpoint(READ_MODELS_CHECKPOINT);
    const dump = await readModel.dump();
    upTo = await readModel.checkpoint(READ_MODELS_CHECKPOINT);
    if (upTo === before) live = dump;
    else if (attempt >= QUIET_ATTEMPTS) {
      throw new Error(
        `The read models kept changing while verify read them (${QUIET_ATTEMPTS} attempts); run it again when writes are quieter.`,
      );
    } else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const scratch = await readModel.openScratch(`${readModel.databaseName}_verify_${randomBytes(4).toString('hex')}`);
  try {
    const projector = new Projector(store, scratch, projection);
    let events = 0;
    for await (const event of store.readAll()) {
      if (event.position > upTo) break;
      await projector.applyEvent(event);
      events++;
    }
    const replayed = await scratch.dump();
    const differences = diffDumps((table) => mongoKeyColumns([live, replayed], table), live, replayed);
    const stopped = await firstFailureAfter(store, upTo, (event) => projector.applyEvent(event));
    return { differences, events, position: upTo, ...(stopped ? { stopped } : {}) };
  } finally {
    await scratch.dispose();
  }
}

type Row = Record<string, unknown>;

/** Primary-key columns of a table, in key order (none for a table without one, e.g. a full-text index). */
function sqliteKeyColumns(db: SqliteDatabase, table: string): string[] {
  const info = db.prepare(`PRAGMA table_info("${table.replace(/"/g, '""')}")`).all() as { name: string; pk: number }[];
  return info
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
}

/** Documents pair by `_id`; the rows the MongoDB dump derives (ACL entries, ancestry) have none and pair whole. */
function mongoKeyColumns(dumps: Record<string, unknown[]>[], table: string): string[] {
  const first = dumps.map((dump) => ownValue(dump, table)?.[0]).find((row) => row !== undefined);
  return typeof first === 'string' && '_id' in (JSON.parse(first) as Row) ? ['_id'] : [];
}

const show = (value: unknown): string => {
  // JSON.stringify gives undefined (whatever its type says) for undefined and functions.
  const text = (JSON.stringify(value) as string | undefined) ?? 'undefined';
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text;
};

/** One line per difference: a row only one side has, or the columns in which a row (same key) differs. */
function diffDumps(
  keyColumns: (table: string) => string[],
  live: Record<string, unknown[]>,
  replayed: Record<string, unknown[]>,
): string[] {
  const lines: string[] = [];
  const tables = [...new Set([...Object.keys(live), ...Object.keys(replayed)])].sort();
  for (const table of tables) {
    const key = keyColumns(table);
    const parse = (rows: unknown[] | undefined) =>
      (rows ?? []).map((r) => (typeof r === 'string' ? (JSON.parse(r) as Row) : (r as Row)));
    const keyOf = (row: Row) =>
      key.length ? key.map((c) => `${c}=${String(ownValue(row, c))}`).join(', ') : JSON.stringify(row);
    const index = (rows: Row[]) => {
      const map = new Map<string, Row[]>();
      for (const row of rows) map.set(keyOf(row), [...(map.get(keyOf(row)) ?? []), row]);
      return map;
    };
    const a = index(parse(ownValue(live, table)));
    const b = index(parse(ownValue(replayed, table)));
    for (const k of [...new Set([...a.keys(), ...b.keys()])].sort()) {
      const left = a.get(k) ?? [];
      const right = b.get(k) ?? [];
      if (left.length === 1 && right.length === 1) {
        const columns = [...new Set([...Object.keys(left[0]), ...Object.keys(right[0])])];
        const changed = columns.filter(
          (c) => JSON.stringify(ownValue(left[0], c)) !== JSON.stringify(ownValue(right[0], c)),
        );
        if (changed.length) {
          lines.push(
            `${table} row ${k} differs: ${changed.map((c) => `${c}: live ${show(ownValue(left[0], c))}, replayed ${show(ownValue(right[0], c))}`).join('; ')}`,
          );
        }
        continue;
      }
      // Unmatched rows (or a key held by several rows, which a primary key rules out): compare as whole rows.
      const rightLeft = right.map((r) => JSON.stringify(r));
      const leftOnly = left.filter((r) => {
        const i = rightLeft.indexOf(JSON.stringify(r));
        if (i < 0) return true;
        rightLeft.splice(i, 1);
        return false;
      });
      for (const row of leftOnly)
        lines.push(
          `${table} row ${key.length ? k : ''}${key.length ? ' ' : ''}only in the live read models: ${show(row)}`,
        );
      for (const text of rightLeft)
        lines.push(
          `${table} row ${key.length ? k : ''}${key.length ? ' ' : ''}missing from the live read models: ${show(JSON.parse(text))}`,
        );
    }
  }
  return lines;
}
