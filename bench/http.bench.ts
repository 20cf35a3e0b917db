/**
 * The request path on the embedded default: the service in a process of its own (NODE_ENV=production, 127.0.0.1),
 * loaded by autocannon with 10 connections from this process, against a bare express app (also its own process)
 * answering the same JSON bytes: the yardstick of what Node and express alone do on this machine in this run.
 *
 *   npm run bench -- http            (or --quick)
 */
import type { Benchmark, BenchRow } from './lib/benchRow';
import { load, sequentialLatency } from './lib/load';
import { startBare, startService } from './lib/serverProcess';
import { folderWithChildren, scenario } from './lib/scenario';

const bench: Benchmark = async ({ quick }) => {
  const seconds = quick ? 1 : 10;
  const service = await startService();
  try {
    const s = await scenario(service);
    const auth = { 'Girder-Token': s.admin.token };
    const one = await s.admin.call('GET', `/folder/${s.publicFolderId}`);
    const listed = await folderWithChildren(s, service.dataDir, 'listing 1k', 1000);
    const page = await s.admin.call('GET', '/folder', { parentType: 'folder', parentId: listed, limit: 50 });
    const bare = await startBare({
      one: { json: one.body },
      list: { json: page.body, headers: { 'Girder-Total-Count': page.headers.get('girder-total-count')! } },
    });
    try {
      const bareGet = await load({ url: `${bare.api}/folder/${s.publicFolderId}`, seconds });
      const bareList = await load({ url: `${bare.api}/folder?parentType=folder&parentId=${listed}&limit=50`, seconds });
      const get = await load({ url: `${service.api}/folder/${s.publicFolderId}`, seconds, headers: auth });
      const list = await load({
        url: `${service.api}/folder?parentType=folder&parentId=${listed}&limit=50`,
        seconds,
        headers: auth,
      });
      let n = 0;
      const post = await load({
        url: `${service.api}/folder`,
        method: 'POST',
        seconds,
        headers: auth,
        setupRequest: (request) => ({
          ...request,
          method: 'POST',
          path: `/api/v1/folder?parentType=folder&parentId=${s.publicFolderId}&name=load%20${n++}`,
        }),
      });
      const sequential = await sequentialLatency(quick ? 30 : 1000, async (i) => {
        await s.admin.ok('POST', '/folder', {
          parentType: 'folder',
          parentId: s.publicFolderId,
          name: `one by one ${i}`,
        });
      });
      const bareSequential = await sequentialLatency(quick ? 30 : 1000, async () => {
        await fetch(`${bare.api}/folder/${s.publicFolderId}`).then((r) => r.arrayBuffer());
      });
      const rows: BenchRow[] = [
        throughput('GET /folder/:id, site admin', get.rps, bareGet.rps, 0.7),
        throughput('POST /folder (append + project + respond)', post.rps, bareGet.rps, 0.35),
        {
          measure: 'POST /folder p99 latency (10 connections)',
          value: post.p99,
          unit: 'ms',
          baselineName: 'bare GET p99',
          baseline: bareGet.p99,
          ratio: post.p99 / Math.max(bareGet.p99, 1),
          goal: '< 20 ms',
          met: post.p99 < 20,
        },
        {
          measure: 'one-by-one POST /folder (sequential, mean)',
          value: sequential.mean,
          unit: 'ms',
          baselineName: 'bare GET round trip',
          baseline: bareSequential.mean,
          ratio: sequential.mean / bareSequential.mean,
          goal: '< 1 ms each',
          met: sequential.mean < 1,
        },
        throughput('GET /folder list 50 of 1k children, site admin', list.rps, bareList.rps, 0.3, 'bare list'),
      ];
      return rows;
    } finally {
      await bare.stop();
    }
  } finally {
    await service.remove();
  }
};

function throughput(
  measure: string,
  value: number,
  baseline: number,
  goal: number,
  baselineName = 'bare GET',
): BenchRow {
  const ratio = value / baseline;
  return {
    measure,
    value,
    unit: 'req/s',
    baselineName: `${baselineName} (express, same JSON)`,
    baseline,
    ratio,
    goal: `≥ ${goal}× ${baselineName}`,
    met: ratio >= goal,
  };
}

export default bench;
