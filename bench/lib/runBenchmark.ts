/**
 * Child-process entry of the bench runner: `node --import tsx bench/lib/runBenchmark.ts <file> <rows.json> quick|full`.
 * Imports one benchmark file, runs its default export and writes the rows it returns; exits by itself (a benchmark
 * that leaves a handle open must not hang the run).
 */
import fs from 'node:fs';
import type { Benchmark } from './benchRow';

async function main(): Promise<void> {
  const [file, rowsFile, mode] = process.argv.slice(2);
  if (!file || !rowsFile) throw new Error('usage: runBenchmark.ts <bench file> <rows.json> quick|full');
  const module = (await import(file)) as { default?: Benchmark | { default?: Benchmark } };
  // tsx's CommonJS interop may wrap the default export once more.
  const benchmark = typeof module.default === 'function' ? module.default : module.default?.default;
  if (typeof benchmark !== 'function') throw new Error(`${file} does not default-export a Benchmark`);
  const rows = await benchmark({ quick: mode === 'quick' });
  fs.writeFileSync(rowsFile, JSON.stringify(rows));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
