/**
 * The projector's lease work (renew, retry, take over, step down) run one piece at a time, in one chain, so that no
 * two pieces see the role half changed; and the one timer that queues the next piece. Once stopped, nothing more is
 * scheduled and queued pieces that have not begun are skipped.
 */
export class TransitionQueue {
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Queues `work` after `ms`, replacing the piece scheduled before (the timer does not keep the process alive). */
  schedule(ms: number, work: () => Promise<void>): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.enqueue(work);
    }, ms);
    this.timer.unref();
  }

  /** Runs `work` once every piece queued before it has ended. */
  enqueue(work: () => Promise<void>): void {
    const run = async () => {
      if (!this.stopped) await work();
    };
    this.chain = this.chain.then(run).catch(this.onError);
  }

  /** Schedules and runs nothing more (a piece running goes on: {@link settled}). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Resolves once the piece running (if any) and those queued behind it have ended. */
  settled(): Promise<void> {
    return this.chain;
  }
}
