/**
 * CPU profile (--cpu-prof) of the service while it receives one chunked upload (64 MiB chunks, as girder_client
 * sends them), for docs/performance.md:
 *   npx tsx bench/prof/uploadProfile.ts [MiB, default 256] [profile dir, default /tmp/prof-upload]
 *   node bench/prof/selfTime.cjs <dir>/<main thread>.cpuprofile
 * Prints the upload's seconds and where the profiles went (one per thread: the main one and the hashing thread).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Api } from '../lib/api';
import { MiB, timed, uploadInChunks, writeRandomFile } from '../lib/fileTransfer';
import { startService } from '../lib/serverProcess';

async function main(): Promise<void> {
  const size = Number(process.argv[2] ?? 256) * MiB;
  const out = process.argv[3] ?? '/tmp/prof-upload';
  fs.mkdirSync(out, { recursive: true });
  const service = await startService({}, ['--cpu-prof', `--cpu-prof-dir=${out}`]);
  try {
    const api = new Api(service.api);
    const admin = await api.registerAsOwner('prof');
    const source = path.join(service.dataDir, 'source.bin');
    writeRandomFile(source, size);
    const target = { api: service.api, token: admin.token };
    const folderId = admin.publicFolderId;
    const seconds = await timed(() => uploadInChunks(target, folderId, source, 'profiled.bin', 64 * MiB));
    console.log(`${size / MiB} MiB in ${seconds.toFixed(2)} s (${(size / MiB / seconds).toFixed(0)} MiB/s)`);
  } finally {
    await service.remove();
  }
  console.log(`profiles in ${out}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
