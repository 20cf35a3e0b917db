import autocannon from 'autocannon';

export interface LoadResult {
  /** Requests per second (mean over the run), counting 2xx answers only. */
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/**
 * Load with autocannon against 127.0.0.1 (10 connections unless told otherwise). A run with non-2xx answers or
 * errors throws: a benchmark that measures error pages measures nothing.
 *
 * `warmUpSeconds` of the same load go first, untimed: the steady state of a long-running server is what counts, not
 * V8 compiling its hot functions. In the first seconds of a POST load the V8 worker threads spent as much CPU
 * optimising code as the request path took (perf, docs/performance.md); ten seconds later, ~1 %.
 */
export async function load(o: {
  url: string;
  seconds: number;
  warmUpSeconds?: number;
  connections?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Rewrites each request (e.g. a fresh name per POST). */
  setupRequest?: (request: { path: string; method?: string }) => { path: string; method?: string };
}): Promise<LoadResult> {
  if (!o.url.startsWith('http://127.0.0.1:')) throw new Error('benchmarks target 127.0.0.1 only');
  const run = (seconds: number) =>
    autocannon({
      url: o.url,
      method: o.method ?? 'GET',
      connections: o.connections ?? 10,
      duration: seconds,
      headers: o.headers ?? {},
      ...(o.setupRequest ? { requests: [{ setupRequest: o.setupRequest as never }] } : {}),
    });
  if (o.warmUpSeconds) await run(o.warmUpSeconds);
  const result = await run(o.seconds);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0)
    throw new Error(
      `${o.method ?? 'GET'} ${o.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: bad };
}

/**
 * Latency percentiles (ms) of `n` sequential calls of `call`, after `warmUp` untimed calls (numbered from -1 down):
 * the first calls of a fresh process pay for JIT compilation and lazy start-up, which is not what a steady client
 * sees (in a 30-call quick run they were most of the mean).
 */
export async function sequentialLatency(
  n: number,
  call: (i: number) => Promise<void>,
  warmUp = 0,
): Promise<{ p50: number; mean: number }> {
  for (let i = 1; i <= warmUp; i++) await call(-i);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await call(i);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], mean: times.reduce((a, b) => a + b, 0) / times.length };
}
