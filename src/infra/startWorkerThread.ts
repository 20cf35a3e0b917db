import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on `entry` (a path without extension): compiled, the `.js` file itself (a bundle of its own,
 * listed in scripts/build.ts); from TypeScript sources (tsx, ts-jest), through tsx's require hook, since a worker
 * thread does not inherit the parent's module loader. `compiled` says which of the two the caller is (its own
 * `__filename` ends in `.js`).
 */
export function startWorkerThread(entry: string, compiled: boolean, workerData: unknown): Worker {
  if (compiled) return new Worker(`${entry}.js`, { workerData });
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(`${entry}.ts`)});`;
  return new Worker(code, { eval: true, workerData });
}
