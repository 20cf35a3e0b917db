/**
 * CPU time per request of the service process (all threads, and its main thread alone) vs the bare express
 * yardstick, under autocannon load: a load-insensitive view of the http benchmark on a shared machine.
 *   npx tsx bench/prof/cpuPerRequest.ts [seconds]
 */
import fs from 'node:fs';
import autocannon from 'autocannon';
import { startService, type ServerProcess } from '../lib/serverProcess';
import { httpTargets } from '../lib/httpTargets';

const seconds = Number(process.argv[2] ?? 3);
const TICK_MS = 1000 / 100;
const cpu = (pid: number, tid = pid) => {
  const f = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
};
const cpuAll = (pid: number) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
};

async function measure(
  server: ServerProcess,
  name: string,
  o: { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; setupRequest?: any },
) {
  const a0 = cpuAll(server.pid),
    m0 = cpu(server.pid);
  const r = await autocannon({
    url: o.url,
    method: o.method ?? 'GET',
    connections: 10,
    duration: seconds,
    headers: o.headers ?? {},
    ...(o.setupRequest ? { requests: [{ setupRequest: o.setupRequest }] } : {}),
  });
  const n = (r.requests as unknown as { total: number }).total;
  const all = (cpuAll(server.pid) - a0) / n,
    main = (cpu(server.pid) - m0) / n;
  console.log(
    `${name.padEnd(28)} ${String(Math.round(r.requests.average)).padStart(6)} req/s  p99 ${String(r.latency.p99).padStart(4)} ms  cpu/req all ${(all * 1000).toFixed(0).padStart(5)} µs  main ${(main * 1000).toFixed(0).padStart(5)} µs  non2xx ${r.non2xx}`,
  );
  return { all, main };
}

async function main() {
  const service = await startService();
  try {
    const { bare, auth, urls, nextPost } = await httpTargets(service);
    try {
      const bg = await measure(bare, 'bare GET', { url: urls.bareGet });
      const bl = await measure(bare, 'bare list', { url: urls.bareList });
      const g = await measure(service, 'GET /folder/:id', { url: urls.get, headers: auth });
      const l = await measure(service, 'list 50 of 1k', { url: urls.list, headers: auth });
      const p = await measure(service, 'POST /folder', {
        url: urls.post,
        method: 'POST',
        headers: auth,
        setupRequest: nextPost,
      });
      console.log(
        `bare/service cpu per request (main thread): GET ${(bg.main / g.main).toFixed(2)}  POST ${(bg.main / p.main).toFixed(2)}  list ${(bl.main / l.main).toFixed(2)}`,
      );
    } finally {
      await bare.stop();
    }
  } finally {
    await service.remove();
  }
}
void main();
