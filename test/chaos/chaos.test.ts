import { runChaos } from './chaos';

/**
 * The short chaos run in the suite: three service processes on one DATA_DIR, a mixed workload round-robin, an SSE
 * subscriber per process, `kill -9` of a random process (the lease holder every other time) every ~2 s for 30 s.
 * The long run is `npm run chaos` (test/chaos/chaos.ts says what is checked).
 */
jest.setTimeout(240_000);

it('keeps every acknowledged write, every subscriber sequence and every referenced blob through kill -9 of any process', async () => {
  const report = await runChaos({ seconds: 30, maxKills: 12, killEveryMs: 2000, log: (line) => console.info(line) });
  expect(report.failures).toEqual([]);
  // The run did what it claims: processes died, the lease changed hands, writes were acknowledged and streamed.
  expect(report.kills).toBeGreaterThanOrEqual(2);
  expect(report.holderKills).toBeGreaterThanOrEqual(1);
  expect(report.takeovers).toBeGreaterThanOrEqual(report.holderKills);
  expect(report.acknowledged).toBeGreaterThan(20);
  expect(report.eventsChecked).toBeGreaterThan(report.acknowledged);
});
