/**
 * Listings whose cost should not grow with the number of siblings: the first 50 children of a folder holding 1k
 * children (the baseline, same run) against one holding 10k (--quick) or 1M (full) children seeded through the bulk
 * event path (bench/lib/seedFolders.ts), read by the site admin and by an ordinary user who reads through the ACL
 * (every child, or only the last tenth of them); and a deep offset, which Girder's offset paging makes walk the index
 * up to it.
 *
 *   npm run bench -- listing          (LISTING_CHILDREN=<n> to change the large size)
 */
import type { Benchmark, BenchRow } from './lib/benchRow';
import type { Api } from './lib/api';
import { sequentialLatency } from './lib/load';
import { startService } from './lib/serverProcess';
import { folderWithChildren, scenario, type Scenario } from './lib/scenario';

const bench: Benchmark = async ({ quick }) => {
  const large = Number(process.env.LISTING_CHILDREN ?? (quick ? 10_000 : 1_000_000));
  const samples = quick ? 40 : 200;
  const deepOffset = Math.min(15_000, large - 1_000);
  const service = await startService();
  try {
    const s = await scenario(service);
    const small = await folderWithChildren(s, service.dataDir, 'listing 1k', 1_000);
    const big = await folderWithChildren(s, service.dataDir, `listing ${large}`, large);
    const p50 = async (api: Api, parentId: string, offset = 0) =>
      (
        await sequentialLatency(samples, async () => {
          const { status } = await api.call('GET', '/folder', { parentType: 'folder', parentId, limit: 50, offset });
          if (status !== 200) throw new Error(`listing answered ${status}`);
        })
      ).p50;
    const rows: BenchRow[] = [];
    const size = large.toLocaleString('en');
    for (const [who, api] of [
      ['site admin', s.admin],
      ['ordinary user (ACL)', s.user],
    ] as const) {
      const atSmall = await p50(api, small);
      const atLarge = await p50(api, big);
      rows.push({
        measure: `list 50 of ${size} children, ${who}, p50`,
        value: atLarge,
        unit: 'ms',
        baselineName: 'same at 1k children',
        baseline: atSmall,
        ratio: atLarge / atSmall,
        goal: '≤ 1.5× the 1k latency',
        met: atLarge <= 1.5 * atSmall,
      });
    }
    // A user who reads only the last tenth of the children (in name order): a walk of the parent's sort index passes
    // the nine tenths before reaching the first of them; the read classes' index goes straight there. (Half the
    // large size in a quick run, which has to stay under a minute.)
    const partLarge = quick ? Math.floor(large / 2) : large;
    const partSmall = await folderWithChildren(s, service.dataDir, 'listing 1k, a tenth readable', 1_000, 100);
    const partBig = await folderWithChildren(
      s,
      service.dataDir,
      `listing ${partLarge}, a tenth readable`,
      partLarge,
      Math.floor(partLarge / 10),
    );
    const partAtSmall = await p50(s.user, partSmall);
    const partAtLarge = await p50(s.user, partBig);
    rows.push({
      measure: `list 50 of ${partLarge.toLocaleString('en')} children, ordinary user who reads only the last tenth, p50`,
      value: partAtLarge,
      unit: 'ms',
      baselineName: 'same at 1k children',
      baseline: partAtSmall,
      ratio: partAtLarge / partAtSmall,
      goal: '≤ 1.5× the 1k latency',
      met: partAtLarge <= 1.5 * partAtSmall,
    });
    const first = await p50(s.user, big);
    const deep = await p50(s.user, big, deepOffset);
    rows.push({
      measure: `list 50 at offset ${deepOffset.toLocaleString('en')} of ${size}, ordinary user, p50`,
      value: deep,
      unit: 'ms',
      baselineName: 'first page, same folder',
      baseline: first,
      ratio: deep / first,
      goal: '≤ 3× the first page (offset walks the index)',
      met: deep <= 3 * first,
    });
    rows.push(...(await sortedListingRows(s, big, size, quick)));
    return rows;
  } finally {
    await service.remove();
  }
};

/**
 * A page sorted on a key no index serves (`created`: every child of the parent is read and sorted) costs time in
 * proportion to the siblings, whoever runs it; what must not grow with them is everyone else's wait. A client lists
 * the large folder that way back to back while another asks `GET /system/version` every 20 ms; the same GETs alone
 * are the baseline. The listing's own latency is reported next to the default sort's.
 */
async function sortedListingRows(s: Scenario, parentId: string, size: string, quick: boolean): Promise<BenchRow[]> {
  const probes = quick ? 25 : 100;
  const list = (sort: string) =>
    s.user.call('GET', '/folder', { parentType: 'folder', parentId, limit: 50, sort, sortdir: -1 });
  const alone = await probeVersion(s.admin, probes);
  let listing = true;
  let failure: Error | undefined;
  const sortedTimes: number[] = [];
  // Caught inside, so that a failed listing is reported after the probes rather than as an unhandled rejection.
  const lister = (async () => {
    try {
      while (listing) {
        const started = performance.now();
        const { status } = await list('created');
        if (status !== 200) throw new Error(`sorted listing answered ${status}`);
        sortedTimes.push(performance.now() - started);
      }
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
    }
  })();
  let during: number[];
  try {
    during = await probeVersion(s.admin, probes);
  } finally {
    listing = false;
    await lister;
  }
  if (failure) throw failure;
  const defaultSort = await sequentialLatency(quick ? 10 : 50, async () => {
    const { status } = await list('lowerName');
    if (status !== 200) throw new Error(`listing answered ${status}`);
  });
  const worstAlone = Math.max(...alone);
  const worstDuring = Math.max(...during);
  sortedTimes.sort((a, b) => a - b);
  const sortedP50 = sortedTimes[Math.floor(sortedTimes.length / 2)];
  return [
    {
      measure: `GET /system/version every 20 ms while another client lists ${size} children sorted by created: worst`,
      value: worstDuring,
      unit: 'ms',
      baselineName: 'same GETs alone, worst',
      baseline: worstAlone,
      ratio: worstDuring / worstAlone,
      goal: 'no answer blocked > 100 ms',
      met: worstDuring < 100,
    },
    {
      measure: `list 50 of ${size} children sorted by created (no index serves it), p50 of ${sortedTimes.length}`,
      value: sortedP50,
      unit: 'ms',
      baselineName: 'same folder, default sort (lowerName), p50',
      baseline: defaultSort.p50,
      ratio: sortedP50 / defaultSort.p50,
      goal: 'reported (grows with the siblings)',
      met: true,
    },
  ];
}

/** `count` GETs of /system/version, 20 ms apart: each answer's time. */
async function probeVersion(api: Api, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const { status } = await api.call('GET', '/system/version');
    if (status !== 200) throw new Error(`GET /system/version answered ${status}`);
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return times;
}

export default bench;
