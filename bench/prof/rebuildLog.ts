/**
 * Keeps the rebuild benchmark's event log for A/B runs of the rebuild CLI alone (same workload as
 * bench/rebuild.bench.ts: `folders` children seeded through the bulk event path, 20 renames and metadata changes).
 *   npx tsx bench/prof/rebuildLog.ts <folders> <dir>
 *   cp -r <dir> /tmp/run && DATA_DIR=/tmp/run NODE_ENV=production node --cpu-prof dist/cli/main.js rebuild
 */
import fs from 'node:fs';
import { startService } from '../lib/serverProcess';
import { writeRebuildWorkload } from '../lib/rebuildWorkload';

async function main(): Promise<void> {
  const [folders, out] = [Number(process.argv[2]), process.argv[3]];
  if (!(folders > 0) || !out) throw new Error('usage: rebuildLog.ts <folders> <dir>');
  const service = await startService();
  try {
    await writeRebuildWorkload(service, folders);
    await service.stop();
    fs.cpSync(service.dataDir, out, { recursive: true });
  } finally {
    await service.remove();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
