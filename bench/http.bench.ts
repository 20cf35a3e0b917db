/**
 * The request path on the embedded default: the service in a process of its own (NODE_ENV=production, 127.0.0.1),
 * loaded by autocannon with 10 connections from this process, against a bare express app (also its own process)
 * answering the same JSON bytes: the yardstick of what Node and express alone do on this machine in this run.
 *
 *   npm run bench -- http            (or --quick)
 */
import type { Benchmark, BenchRow } from './lib/benchRow';
import { alternatingLoads, continuousLoad, sequentialLatency } from './lib/load';
import { startService } from './lib/serverProcess';
import { httpTargets } from './lib/httpTargets';

/** Untimed calls before each sequential measurement (see sequentialLatency). */
const SEQUENTIAL_WARM_UP = 30;
/** Untimed seconds of each load before it is measured, on the bare app as on the service (see alternatingLoads). */
const WARM_UP_SECONDS = 3;
/** Each load's measured time, in alternating slices with its baseline's. */
const SLICES = 5;

const bench: Benchmark = async ({ quick }) => {
  const seconds = quick ? 1 : 10;
  const warmUpSeconds = quick ? 0 : WARM_UP_SECONDS;
  const service = await startService();
  try {
    const { s, bare, auth, urls, nextPost } = await httpTargets(service);
    try {
      const timing = { seconds, warmUpSeconds, slices: quick ? 1 : SLICES };
      const postLoad = { url: urls.post, method: 'POST' as const, headers: auth, setupRequest: nextPost };
      const { baseline: bareGet, service: get } = await alternatingLoads(
        { url: urls.bareGet },
        { url: urls.get, headers: auth },
        timing,
      );
      const { baseline: bareList, service: list } = await alternatingLoads(
        { url: urls.bareList },
        { url: urls.list, headers: auth },
        timing,
      );
      const { baseline: bareGetBeforePost, service: post } = await alternatingLoads(
        { url: urls.bareGet },
        postLoad,
        timing,
      );
      // Latency from one continuous run (warm by now), against the bare GET's, also continuous.
      const postLatency = await continuousLoad(postLoad, seconds);
      const bareGetLatency = await continuousLoad({ url: urls.bareGet }, seconds);
      const sequentialCalls = quick ? 100 : 1000;
      const sequential = await sequentialLatency(
        sequentialCalls,
        async (i) => {
          await s.admin.ok('POST', '/folder', {
            parentType: 'folder',
            parentId: s.publicFolderId,
            name: `one by one ${i}`,
          });
        },
        SEQUENTIAL_WARM_UP,
      );
      const bareSequential = await sequentialLatency(
        sequentialCalls,
        async () => {
          await fetch(urls.bareGet).then((r) => r.arrayBuffer());
        },
        SEQUENTIAL_WARM_UP,
      );
      const rows: BenchRow[] = [
        throughput('GET /folder/:id, site admin', get.rps, bareGet.rps, 0.7),
        throughput('POST /folder (append + project + respond)', post.rps, bareGetBeforePost.rps, 0.35),
        {
          measure: 'POST /folder p99 latency (10 connections)',
          value: postLatency.p99,
          unit: 'ms',
          baselineName: 'bare GET p99',
          baseline: bareGetLatency.p99,
          ratio: postLatency.p99 / Math.max(bareGetLatency.p99, 1),
          goal: '< 20 ms',
          met: postLatency.p99 < 20,
        },
        oneByOne('mean', sequential.mean, bareSequential.mean, 'bare GET round trip'),
        oneByOne('p50', sequential.p50, bareSequential.p50, 'bare GET round trip, p50'),
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

/** A sequential-create row: `statistic` of the creates against the same statistic of the bare round trip. */
function oneByOne(statistic: 'mean' | 'p50', value: number, baseline: number, baselineName: string): BenchRow {
  return {
    measure: `one-by-one POST /folder (sequential, ${statistic})`,
    value,
    unit: 'ms',
    baselineName,
    baseline,
    ratio: value / baseline,
    goal: '< 1 ms each',
    met: value < 1,
  };
}

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
