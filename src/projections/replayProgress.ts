/** How far a replay of the log has got (the rebuild's progress reports and its final figures). */
export interface RebuildProgress {
  /** Events replayed so far. */
  events: number;
  /** Position of the last event replayed. */
  position: bigint;
  /** Seconds since the replay started. */
  seconds: number;
  /** Average replay rate so far. */
  eventsPerSecond: number;
}

/**
 * Counts a replay's events and hands the figures to `onProgress` at most once per `intervalMs`: one meter for both
 * replays (the in-place rebuild, src/projections/rebuild.ts, and the MongoDB blue/green one, src/cli/rebuild.ts).
 */
export class ReplayMeter {
  private readonly started = performance.now();
  private lastReport = this.started;
  private events = 0;
  private position = 0n;

  constructor(
    private readonly onProgress?: (progress: RebuildProgress) => void,
    private readonly intervalMs = 1000,
  ) {}

  /** `count` events replayed, the last at `position`; reports if the interval has passed since the last report. */
  reached(position: bigint, count: number): void {
    this.events += count;
    this.position = position;
    if (this.onProgress && performance.now() - this.lastReport >= this.intervalMs) {
      this.lastReport = performance.now();
      this.onProgress(this.progress());
    }
  }

  /** `count` events that count as replayed without moving the position (events no projection handles). */
  passed(count: number): void {
    this.events += count;
  }

  /** The position moves on with no event counted (the checkpoint past the skipped events at the end of the log). */
  movedTo(position: bigint): void {
    this.position = position;
  }

  get lastPosition(): bigint {
    return this.position;
  }

  progress(): RebuildProgress {
    const seconds = (performance.now() - this.started) / 1000;
    return {
      events: this.events,
      position: this.position,
      seconds,
      eventsPerSecond: seconds > 0 ? this.events / seconds : 0,
    };
  }
}
