/**
 * `npm run bench [-- --quick] [-- name ...]`: runs every `bench/*.bench.ts` (the contract is bench/lib/benchRow.ts),
 * each in a child process of its own, prints one table (measure, value, baseline, ratio, goal, met?) and writes the
 * rows as JSON to `bench/results/<timestamp>.json` (`--quick` runs write `<timestamp>-quick.json`).
 *
 * Extra arguments select benchmarks by file name (`npm run bench -- http listing`). Every benchmark targets 127.0.0.1
 * only and stops by itself; a child that outlives its time limit is killed and reported as failed. The exit code is 1
 * when a benchmark failed to run (a goal that is not met is a figure, not a failure; a file from before the contract
 * is skipped with a warning).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchRow } from './lib/benchRow';
import { formatTable } from './lib/table';

const BENCH_DIR = __dirname;
/** Per benchmark file. The quick run as a whole takes under a minute on a quiet 2-core machine; the limit leaves room
 * for a loaded CI host. A full run may seed a million folders. */
const TIME_LIMIT_MS = { quick: 150_000, full: 45 * 60_000 };

interface FileOutcome {
  file: string;
  rows: BenchRow[];
  error?: string;
  /** Why the file was not run (a script from before the contract): reported, not a failure. */
  skipped?: string;
  seconds: number;
}

async function main(argv: string[]): Promise<number> {
  const quick = argv.includes('--quick');
  const only = argv.filter((a) => !a.startsWith('--'));
  const files = fs
    .readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => only.length === 0 || only.some((name) => f.includes(name)))
    .sort();
  const outcomes: FileOutcome[] = [];
  for (const file of files) {
    if (!followsContract(path.join(BENCH_DIR, file))) {
      console.error(`skipped ${file}: it does not default-export a Benchmark (bench/lib/benchRow.ts)`);
      outcomes.push({ file, rows: [], skipped: 'does not default-export a Benchmark', seconds: 0 });
      continue;
    }
    console.error(`running ${file}${quick ? ' (quick)' : ''} ...`);
    const outcome = await runInChild(file, quick);
    console.error(
      `  ${outcome.error ? `FAILED: ${outcome.error}` : `${outcome.rows.length} rows`} in ${outcome.seconds.toFixed(1)} s`,
    );
    outcomes.push(outcome);
  }
  const rows = outcomes.flatMap((o) => o.rows);
  console.log(formatTable(rows));
  const failed = outcomes.filter((o) => o.error);
  for (const f of failed) console.log(`FAILED ${f.file}: ${f.error}`);
  for (const f of outcomes.filter((o) => o.skipped)) console.log(`skipped ${f.file}: ${f.skipped}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const out = path.join(BENCH_DIR, 'results', `${stamp}${quick ? '-quick' : ''}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    totalMemMB: Math.round(os.totalmem() / 2 ** 20),
    node: process.version,
    loadAverage: os.loadavg(),
  };
  fs.writeFileSync(
    out,
    JSON.stringify({ at: new Date().toISOString(), quick, machine, files: outcomes }, null, 2) + '\n',
  );
  console.log(`\nwritten to ${path.relative(process.cwd(), out)}`);
  return failed.length ? 1 : 0;
}

/** A file from before the contract (a script that runs on import) must not be imported by the runner. */
function followsContract(file: string): boolean {
  return /^export default /m.test(fs.readFileSync(file, 'utf8'));
}

/** Runs one benchmark file in its own Node process (TypeScript through tsx); its rows come back in a temp file. */
function runInChild(file: string, quick: boolean): Promise<FileOutcome> {
  const started = performance.now();
  const rowsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-rows-')), 'rows.json');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(BENCH_DIR, 'lib', 'runBenchmark.ts'),
      path.join(BENCH_DIR, file),
      rowsFile,
      quick ? 'quick' : 'full',
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, NODE_ENV: 'production' },
    },
  );
  const limit = quick ? TIME_LIMIT_MS.quick : TIME_LIMIT_MS.full;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, limit);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      let rows: BenchRow[] = [];
      let error: string | undefined;
      try {
        rows = JSON.parse(fs.readFileSync(rowsFile, 'utf8')) as BenchRow[];
      } catch {
        error = timedOut ? `killed after ${limit / 1000} s` : `exited with ${signal ?? code} before reporting rows`;
      }
      if (!error && code !== 0) error = `exited with ${signal ?? code}`;
      fs.rmSync(path.dirname(rowsFile), { recursive: true, force: true });
      resolve({ file, rows, seconds, ...(error ? { error } : {}) });
    });
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
