/**
 * CPU time per request of the service process (all threads, and its main thread alone) vs the bare express
 * yardstick, under autocannon load: a load-insensitive view of the http benchmark on a shared machine.
 *   npx tsx bench/prof/cpuPerRequest.ts [seconds]
 */
import fs from 'node:fs';
import autocannon from 'autocannon';
import { startBare, startService, type ServerProcess } from '../lib/serverProcess';
import { folderWithChildren, scenario } from '../lib/scenario';

const seconds = Number(process.argv[2] ?? 3);
const TICK_MS = 1000 / 100;
const cpu = (pid: number, tid = pid) => { const f = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * TICK_MS; };
const cpuAll = (pid: number) => { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * TICK_MS; };

async function measure(server: ServerProcess, name: string, o: { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; setupRequest?: any }) {
  const a0 = cpuAll(server.pid), m0 = cpu(server.pid);
  const r = await autocannon({ url: o.url, method: o.method ?? 'GET', connections: 10, duration: seconds, headers: o.headers ?? {}, ...(o.setupRequest ? { requests: [{ setupRequest: o.setupRequest }] } : {}) } as any);
  const n = (r.requests as unknown as { total: number }).total;
  const all = (cpuAll(server.pid) - a0) / n, main = (cpu(server.pid) - m0) / n;
  console.log(`${name.padEnd(28)} ${String(Math.round(r.requests.average)).padStart(6)} req/s  p99 ${String(r.latency.p99).padStart(4)} ms  cpu/req all ${(all * 1000).toFixed(0).padStart(5)} µs  main ${(main * 1000).toFixed(0).padStart(5)} µs  non2xx ${r.non2xx}`);
  return { all, main };
}

async function main() {
  const service = await startService();
  try {
    const s = await scenario(service);
    const auth = { 'Girder-Token': s.admin.token };
    const one = await s.admin.call('GET', `/folder/${s.publicFolderId}`);
    const listed = await folderWithChildren(s, service.dataDir, 'listing 1k', 1000);
    const page = await s.admin.call('GET', '/folder', { parentType: 'folder', parentId: listed, limit: 50 });
    const bare = await startBare({ one: { json: one.body }, list: { json: page.body, headers: { 'Girder-Total-Count': page.headers.get('girder-total-count')! } } });
    try {
      const bg = await measure(bare, 'bare GET', { url: `${bare.api}/folder/${s.publicFolderId}` });
      const bl = await measure(bare, 'bare list', { url: `${bare.api}/folder?parentType=folder&parentId=${listed}&limit=50` });
      const g = await measure(service, 'GET /folder/:id', { url: `${service.api}/folder/${s.publicFolderId}`, headers: auth });
      const l = await measure(service, 'list 50 of 1k', { url: `${service.api}/folder?parentType=folder&parentId=${listed}&limit=50`, headers: auth });
      let n = 0;
      const p = await measure(service, 'POST /folder', { url: `${service.api}/folder`, method: 'POST', headers: auth, setupRequest: (req: any) => ({ ...req, method: 'POST', path: `/api/v1/folder?parentType=folder&parentId=${s.publicFolderId}&name=load%20${n++}` }) });
      console.log(`bare/service cpu per request (main thread): GET ${(bg.main / g.main).toFixed(2)}  POST ${(bg.main / p.main).toFixed(2)}  list ${(bl.main / l.main).toFixed(2)}`);
    } finally {
      await bare.stop();
    }
  } finally {
    await service.remove();
  }
}
main();
