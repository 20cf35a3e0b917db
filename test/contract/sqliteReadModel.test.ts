import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import { readModelContract } from './readModelContract';

readModelContract('SqliteReadModel (temp file)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-rm-'));
  const db = openDatabase(path.join(dir, 'rm.sqlite'));
  const readModel = new SqliteReadModel(db);
  return {
    readModel,
    async dispose() {
      await readModel.dispose();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
