/** The errors a wait for the read models ends with (`Projector.waitFor`); the HTTP layer maps them to 503. */

export class ProjectionLagError extends Error {
  constructor(readonly position: bigint) {
    super(`The read models did not reach position ${position} in time.`);
    this.name = 'ProjectionLagError';
  }
}

/**
 * The projections stopped on the event at `stoppedAt` (it threw `cause`), so the read models cannot reflect
 * `position` until that is fixed. `appended`: the caller's own write is at `position`, recorded and safe, only not
 * visible yet (the command runner says so, {@link afterAppend}); otherwise a command was waiting to read the read
 * models before deciding, and made no change.
 */
export class ProjectionStoppedError extends Error {
  constructor(
    readonly position: bigint,
    readonly stoppedAt: bigint,
    override readonly cause: Error,
    readonly appended = false,
  ) {
    super(`projection stopped at position ${stoppedAt}: ${cause.message}`);
    this.name = 'ProjectionStoppedError';
  }

  /** The same stop, for a write that was appended at `position`. */
  afterAppend(): ProjectionStoppedError {
    return new ProjectionStoppedError(this.position, this.stoppedAt, this.cause, true);
  }
}
