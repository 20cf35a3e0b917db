/**
 * A caller over one of its limits (failed logins, open streams): answered `429` in the error format, with
 * `Retry-After` when the wait is known (src/http/errorMapping.ts).
 */
export class TooManyRequestsError extends Error {
  constructor(
    message: string,
    /** Whole seconds until a retry can succeed; undefined when that depends on the caller (closing a stream). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'TooManyRequestsError';
  }
}
