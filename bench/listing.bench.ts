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
import { folderWithChildren, scenario } from './lib/scenario';

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
    return rows;
  } finally {
    await service.remove();
  }
};

export default bench;
