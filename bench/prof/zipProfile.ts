/**
 * CPU profile (--cpu-prof) of the service while it sends a folder's zip of many small files, with the time per
 * download and per entry, for docs/performance.md:
 *   npx tsx bench/prof/zipProfile.ts [files, default 100] [KiB each, default 16] [profile dir, default /tmp/prof-zip]
 *   node bench/prof/selfTime.cjs <dir>/<main thread>.cpuprofile
 */
import fs from 'node:fs';
import path from 'node:path';
import { Api } from '../lib/api';
import { download, median, timed, uploadInChunks, writeRandomFile, freshen } from '../lib/fileTransfer';
import { startService } from '../lib/serverProcess';

async function main(): Promise<void> {
  const files = Number(process.argv[2] ?? 100);
  const size = Number(process.argv[3] ?? 16) * 1024;
  const out = process.argv[4] ?? '/tmp/prof-zip';
  fs.mkdirSync(out, { recursive: true });
  const service = await startService({}, ['--cpu-prof', `--cpu-prof-dir=${out}`]);
  try {
    const api = new Api(service.api);
    const admin = await api.registerAsOwner('prof');
    const folderId = admin.publicFolderId;
    const source = path.join(service.dataDir, 'source.bin');
    writeRandomFile(source, size);
    const target = { api: service.api, token: admin.token };
    for (let i = 0; i < files; i++) {
      freshen(source, i);
      await uploadInChunks(target, folderId, source, `file-${i}.bin`, size);
    }
    const url = `${service.api}/folder/${folderId}/download`;
    const seconds: number[] = [];
    for (let round = 0; round < 10; round++)
      seconds.push(await timed(() => download(url, { 'Girder-Token': admin.token })));
    const m = median(seconds.slice(2));
    console.log(
      `${files} files of ${size} bytes: median ${(m * 1000).toFixed(0)} ms per zip, ${((m * 1000) / files).toFixed(2)} ms per entry`,
    );
  } finally {
    await service.remove();
  }
  console.log(`profiles in ${out}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
