/** Girder's log names (`log` of `GET /system/log`). */
export const LOG_NAMES = ['error', 'info'] as const;
export type LogName = (typeof LOG_NAMES)[number];

/** The most recent output of each log, for `GET /system/log` (src/infra/logging/logTail.ts keeps it). */
export interface LogTail {
  /** The last `length` bytes of a log (all that is kept when `length` is 0). */
  tail(log: LogName, length: number): Buffer;
}
