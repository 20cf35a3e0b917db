/** The part of autocannon's programmatic API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    requests: Histogram;
    /** 2xx answers. */
    '2xx': number;
    /** Wall time of the run, in seconds. */
    duration: number;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  interface Options {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
    requests?: unknown[];
  }
  function autocannon(options: Options): Promise<Result>;
  export = autocannon;
}
