import { DeadlineExceededError, NotLeaderError, UnavailableError } from '@kurrent/kurrentdb-client';

/**
 * Appends whose outcome is unknown, retried. A deadline that passes, a node that is no longer the leader, or a
 * connection that drops can each leave an append committed without an answer. The retry sends the same events with
 * the same ids and the same expected states, so KurrentDB recognises an append it already wrote (it answers a
 * repeated append idempotently) instead of writing it twice; when it does not (a wrong expected version because
 * the first attempt moved the stream), the caller looks for the events themselves and answers "recorded".
 */
export interface AppendRetryOptions {
  /** Further attempts after the first one failed with an unknown outcome. Default 3. */
  retries: number;
  /** Wait before the first retry, doubling per retry. Default 200 ms. */
  delayMs: number;
}

export const DEFAULT_APPEND_RETRY: AppendRetryOptions = { retries: 3, delayMs: 200 };

/** Errors after which the append may or may not have been written, and which a retry may get past. */
function isUnknownOutcome(error: unknown): boolean {
  return error instanceof DeadlineExceededError || error instanceof NotLeaderError || error instanceof UnavailableError;
}

/**
 * Runs `send`; after an unknown outcome, sends again (same events) up to `retries` times. When the last attempt
 * still has no answer, or a retry fails in any other way (a wrong expected version: the first attempt may have moved
 * the stream), `recorded` looks for the events in the store: found, they are the answer; else the error stands.
 */
export async function appendWithRetry<T>(
  send: () => Promise<T>,
  recorded: () => Promise<T | undefined>,
  options: AppendRetryOptions,
): Promise<T> {
  let outcomeUnknown = false;
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const unknown = isUnknownOutcome(error);
      if (unknown && attempt < options.retries) {
        outcomeUnknown = true;
        await new Promise((resolve) => setTimeout(resolve, options.delayMs * 2 ** attempt));
        continue;
      }
      if (outcomeUnknown || unknown) {
        const found = await recorded().catch(() => undefined);
        if (found !== undefined) return found;
      }
      throw error;
    }
  }
}
