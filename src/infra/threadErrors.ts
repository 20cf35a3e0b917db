import { WrongExpectedVersionError } from '../ports/eventStore';

/**
 * Errors sent between worker threads and the main thread. Structured clone keeps neither an Error's class nor its extra
 * fields; these keep what callers test: the class of a concurrency conflict, the name, message, stack and SQLite code
 * of any other.
 */
export type SerializedError =
  | {
      kind: 'wrongExpectedVersion';
      streamId: string;
      expected: WrongExpectedVersionError['expected'];
      actual: WrongExpectedVersionError['actual'];
    }
  | { kind: 'error'; name: string; message: string; stack?: string; code?: unknown };

export function serializeError(error: unknown): SerializedError {
  if (error instanceof WrongExpectedVersionError) {
    return { kind: 'wrongExpectedVersion', streamId: error.streamId, expected: error.expected, actual: error.actual };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  const code = (e as { code?: unknown }).code;
  return {
    kind: 'error',
    name: e.name,
    message: e.message,
    ...(e.stack ? { stack: e.stack } : {}),
    ...(code !== undefined ? { code } : {}),
  };
}

export function deserializeError(error: SerializedError): Error {
  if (error.kind === 'wrongExpectedVersion')
    return new WrongExpectedVersionError(error.streamId, error.expected, error.actual);
  const revived = new Error(error.message);
  revived.name = error.name;
  if (error.stack) revived.stack = error.stack;
  if (error.code !== undefined) Object.assign(revived, { code: error.code });
  return revived;
}
