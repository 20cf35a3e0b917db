import autocannon from 'autocannon';

export interface LoadResult {
  /** Requests per second over the run, counting 2xx answers only (any other answer fails the run). */
  rps: number;
}

/** One continuous autocannon run: its 2xx answers, its wall time in seconds, and its latency percentiles (ms). */
interface LoadRun {
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
}

/** One autocannon load: what to request, and how. */
export interface LoadTarget {
  url: string;
  connections?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Rewrites each request (e.g. a fresh name per POST). */
  setupRequest?: (request: { path: string; method?: string }) => { path: string; method?: string };
}

/**
 * Load with autocannon against 127.0.0.1 (10 connections unless told otherwise) for `seconds`, in one continuous
 * run. A run with non-2xx answers or errors throws: a benchmark that measures error pages measures nothing.
 */
export async function continuousLoad(o: LoadTarget, seconds: number): Promise<LoadRun> {
  if (!o.url.startsWith('http://127.0.0.1:')) throw new Error('benchmarks target 127.0.0.1 only');
  const result = await autocannon({
    url: o.url,
    method: o.method ?? 'GET',
    connections: o.connections ?? 10,
    duration: seconds,
    headers: o.headers ?? {},
    ...(o.setupRequest ? { requests: [{ setupRequest: o.setupRequest as never }] } : {}),
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0)
    throw new Error(
      `${o.method ?? 'GET'} ${o.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  return { requests: result['2xx'], seconds: result.duration, p50: result.latency.p50, p99: result.latency.p99 };
}

/**
 * A service load against its baseline, measured in alternating slices (baseline, service, baseline, service, …) so
 * that the VM's speed, which drifts by up to 2× within minutes here, weighs on both alike. Measured one after the
 * other, ten seconds each, the same code's POST ratio ranged from 0.23× to 0.37×.
 *
 * Each load first runs `warmUpSeconds` untimed: the steady state of a long-running server is what counts, not V8
 * compiling its hot functions (in the first seconds of a POST load the V8 worker threads spent as much CPU optimising
 * code as the request path took; ten seconds in, ~1 %). Requests per second are the 2xx answers of all slices over
 * their time. Latency is not combined here (percentiles of slices do not add up to the run's, and each slice starts on
 * fresh connections): measure it with {@link continuousLoad}.
 */
export async function alternatingLoads(
  baseline: LoadTarget,
  service: LoadTarget,
  o: { seconds: number; slices: number; warmUpSeconds: number },
): Promise<{ baseline: LoadResult; service: LoadResult }> {
  if (o.warmUpSeconds > 0) {
    await continuousLoad(baseline, o.warmUpSeconds);
    await continuousLoad(service, o.warmUpSeconds);
  }
  const slices: { baseline: LoadRun[]; service: LoadRun[] } = { baseline: [], service: [] };
  for (let i = 0; i < o.slices; i++) {
    slices.baseline.push(await continuousLoad(baseline, o.seconds / o.slices));
    slices.service.push(await continuousLoad(service, o.seconds / o.slices));
  }
  return { baseline: combined(slices.baseline), service: combined(slices.service) };
}

function combined(slices: LoadRun[]): LoadResult {
  return { rps: slices.reduce((n, s) => n + s.requests, 0) / slices.reduce((t, s) => t + s.seconds, 0) };
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
