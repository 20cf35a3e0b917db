import type { Logger } from 'pino';
import { Subject } from '../bus/rxjs';

/** Where and why the projections stopped in this process. */
export interface ProjectionFailure {
  error: Error;
  /** The position of the event that failed. */
  position: bigint;
}

/** Longest pause between attempts to take the lease back after the projections failed in this process. */
const MAX_FAILURE_BACKOFF_MS = 60_000;

/**
 * The failure that stopped the projections in this process: reported (readiness, 503 on writes) until the read model
 * gets past the failed event, announced at once to the writers waiting for their position, and counted, so that the
 * holder tries again after a pause that doubles with each failure in a row.
 */
export class ProjectionFailures {
  private failure: ProjectionFailure | null = null;
  /** Errors (never emits) when the projections fail, so that waiting writers fail at once; replaced after that. */
  private failedSubject = new Subject<never>();
  private inARow = 0;

  constructor(private readonly logger?: Logger) {}

  get current(): ProjectionFailure | null {
    return this.failure;
  }

  /** Errors with the next failure; a wait subscribes to it along with the position it waits for. */
  get failed$(): Subject<never> {
    return this.failedSubject;
  }

  record(error: Error, position: bigint): void {
    this.failure = { error, position };
    this.logger?.fatal(
      { err: error, position: position.toString() },
      'projector stopped: the read models no longer advance',
    );
    const failed$ = this.failedSubject;
    this.failedSubject = new Subject<never>();
    failed$.error(error);
  }

  clear(): void {
    this.logger?.info('the read models advance again');
    this.failure = null;
  }

  /** The projections caught up with the log: whatever failed before is past. */
  caughtUp(): void {
    if (this.failure) this.clear();
    this.inARow = 0;
  }

  /** One more failure in a row; returns how long to wait before trying again (`retryEveryMs` doubling, capped). */
  backoff(retryEveryMs: number): number {
    this.inARow += 1;
    return Math.min(retryEveryMs * 2 ** Math.max(0, this.inARow - 1), MAX_FAILURE_BACKOFF_MS);
  }
}
