/**
 * The contract between `npm run bench` (bench/run.ts) and each benchmark file.
 *
 * Every `bench/*.bench.ts` default-exports a `Benchmark`. The runner starts each one in its own child process (so one
 * benchmark's heap, open handles and SQLite files never disturb the next), passes `{ quick }`, collects the rows,
 * prints one table and writes it as JSON under `bench/results/`.
 *
 * A row is always a measure next to a baseline measured in the same run (bare express, raw better-sqlite3, archiver
 * alone, ...), so the ratio means something on whatever machine runs it.
 */
export interface BenchRow {
  /** What was measured, e.g. "GET /folder/:id (10k folders, site admin)". */
  measure: string;
  /** The measured value, in `unit`. */
  value: number;
  unit: string;
  /** What the same run measured as the yardstick, and in which unit (often the same). */
  baselineName: string;
  baseline: number;
  baselineUnit?: string;
  /** value/baseline oriented so that higher is better (throughput) or as the goal states it; the row explains. */
  ratio: number;
  /** The goal in words, e.g. "≥ 0.7× bare GET", and whether this run met it. */
  goal: string;
  met: boolean;
  /**
   * When the ratio is the median of alternating pairs (a measure and its baseline, one after the other, several
   * times): the lowest and highest ratio of a pair and how many pairs there were. The spread says how much the
   * shared machine moved the figure.
   */
  spread?: { min: number; max: number; pairs: number };
}

export interface BenchOptions {
  /** `npm run bench -- --quick`: small sizes so the whole run finishes in under a minute (CI proves it still runs). */
  quick: boolean;
}

export type Benchmark = (options: BenchOptions) => Promise<BenchRow[]>;
