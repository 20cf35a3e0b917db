import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';

/** The embedded read model on a file of its own, in a fresh directory; `remove` closes it and deletes the directory. */
export interface ReadModelFile {
  file: string;
  db: SqliteDatabase;
  readModel: SqliteReadModel;
  remove(): Promise<void>;
}

export function openReadModelFile(name: string): ReadModelFile {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `folder-service-${name}-`));
  const file = path.join(dir, 'rm.sqlite');
  const db = openDatabase(file);
  const readModel = new SqliteReadModel(db);
  return {
    file,
    db,
    readModel,
    async remove() {
      await readModel.dispose();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
