import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { registerReadClassHash } from '../readmodel/sqlite/readClassIndex';
import { registerUnicodeLower } from '../readmodel/sqlite/sqlHelpers';

export type SqliteDatabase = Database.Database;

/**
 * Opens (creating when needed) the embedded deployment's single SQLite file, which holds the event log, the read
 * models and the projection checkpoints. WAL with synchronous=FULL makes every committed transaction durable before
 * the call returns, so an acknowledged append survives `kill -9` (and power loss, as far as fsync allows).
 * Pass ':memory:' for throwaway stores in unit tests.
 */
export function openDatabase(file: string): SqliteDatabase {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // An index of the read models calls it on every write of a folder row (readClassIndex.ts).
  registerReadClassHash(db);
  registerUnicodeLower(db);
  return db;
}
