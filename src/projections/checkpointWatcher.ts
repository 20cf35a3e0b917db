/**
 * Waits for a read model's checkpoint to reach positions, by polling it (`readModel.checkpoint(...)`, one indexed
 * read): how a process that does not run the projector learns what the projector of another process has applied.
 *
 * One poll loop serves every waiter of the process: it runs only while someone waits, reads the checkpoint, settles
 * the waiters it satisfies and sleeps between reads, from `minDelayMs` doubling to `maxDelayMs`, back to the minimum
 * whenever the checkpoint moved. A read that fails counts as no progress (waiters with a deadline time out).
 */
export class CheckpointWatcher {
  private readonly waiters = new Set<Waiter>();
  private polling = false;
  private wake: (() => void) | null = null;
  private closed = false;
  /** The highest checkpoint read so far. */
  latest = 0n;

  constructor(
    private readonly read: () => Promise<bigint>,
    private readonly options: {
      minDelayMs?: number;
      maxDelayMs?: number;
      /** Called with each new highest checkpoint. */
      onAdvance?: (checkpoint: bigint) => void;
    } = {},
  ) {}

  /**
   * Resolves once the checkpoint is at or past `position`. Rejects with `timeoutError()` after `timeoutMs`, with
   * `signal.reason` when the signal aborts, and with `closedError()` when the watcher is closed.
   */
  until(
    position: bigint,
    wait: { timeoutMs?: number; timeoutError?: () => Error; signal?: AbortSignal } = {},
  ): Promise<void> {
    if (this.latest >= position) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('The checkpoint watcher is closed.'));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        position,
        settle: (error) => {
          this.waiters.delete(waiter);
          if (waiter.timer) clearTimeout(waiter.timer);
          wait.signal?.removeEventListener('abort', onAbort);
          if (error) reject(error);
          else resolve();
        },
      };
      const { signal } = wait;
      const onAbort = () => waiter.settle(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      if (wait.timeoutMs !== undefined) {
        waiter.timer = setTimeout(
          () => waiter.settle(wait.timeoutError?.() ?? new Error(`The checkpoint did not reach ${position} in time.`)),
          wait.timeoutMs,
        );
        waiter.timer.unref();
      }
      this.waiters.add(waiter);
      // A new waiter polls at once rather than at the end of a long backoff.
      this.wake?.();
      void this.poll();
    });
  }

  /** Rejects every waiter and stops polling. */
  close(): void {
    this.closed = true;
    for (const waiter of [...this.waiters]) waiter.settle(new Error('The checkpoint watcher is closed.'));
    this.wake?.();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    const min = this.options.minDelayMs ?? 2;
    const max = this.options.maxDelayMs ?? 50;
    let delay = min;
    try {
      while (this.waiters.size > 0 && !this.closed) {
        let checkpoint = this.latest;
        try {
          checkpoint = await this.read();
        } catch {
          // No progress this time; waiters with a deadline give up on their own.
        }
        if (checkpoint > this.latest) {
          this.latest = checkpoint;
          delay = min;
          this.options.onAdvance?.(checkpoint);
        }
        for (const waiter of [...this.waiters]) if (waiter.position <= this.latest) waiter.settle();
        if (this.waiters.size === 0) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, delay);
          timer.unref();
          function done() {
            clearTimeout(timer);
            resolve();
          }
          this.wake = done;
        });
        this.wake = null;
        delay = Math.min(delay * 2, max);
      }
    } finally {
      this.polling = false;
    }
  }
}

interface Waiter {
  position: bigint;
  timer?: NodeJS.Timeout;
  settle(error?: Error): void;
}
