import { Writable } from 'node:stream';
import { verifyReadModels } from '../../src/cli/verify';
import { loadConfig } from '../../src/config';
import type { Projection } from '../../src/projections/projection';

/** Runs `npm run cli -- verify` in-process on `dataDir`; returns its exit code and what it printed. */
export async function verifyOutput(dataDir: string, projection?: Projection): Promise<{ code: number; text: string }> {
  let text = '';
  const out = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  const code = await verifyReadModels(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir }), [], out, projection);
  return { code, text };
}
