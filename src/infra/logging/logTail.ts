/**
 * The most recent log output, kept in memory for `GET /system/log`. The service logs JSON lines to stdout (where a
 * container platform collects them) and writes no log file, so the tail Girder reads from its `error.log` and
 * `info.log` is kept here instead: a second pino destination splits each line by level as Girder's two handlers do
 * (`error`: warnings and worse; `info`: everything below a warning) and keeps at most `capacity` bytes of each, whole
 * lines, the oldest dropped first. What reaches it is what reaches stdout: secrets are redacted before either.
 */

import type { LogName, LogTail as LogTailPort } from '../../ports/logTail';

/** pino's `warn`: Girder's error log starts at WARNING. */
const WARN = 40;
/** Bytes kept per log by default (Girder's default rotation size is 1 MB). */
const DEFAULT_CAPACITY = 1024 * 1024;

class BoundedLines {
  private readonly lines: Buffer[] = [];
  private bytes = 0;
  constructor(private readonly capacity: number) {}

  push(line: Buffer): void {
    this.lines.push(line);
    this.bytes += line.length;
    while (this.bytes > this.capacity) {
      const oldest = this.lines.shift();
      if (!oldest) break;
      this.bytes -= oldest.length;
    }
  }

  /** The last `length` bytes (every byte kept when `length` is 0 or more than is kept). */
  tail(length: number): Buffer {
    const all = Buffer.concat(this.lines, this.bytes);
    return length > 0 && length < all.length ? all.subarray(all.length - length) : all;
  }
}

export class LogTail implements LogTailPort {
  private readonly logs: Record<LogName, BoundedLines>;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.logs = { error: new BoundedLines(capacity), info: new BoundedLines(capacity) };
  }

  /** pino's destination interface: one call per serialised line. */
  write(line: string): void {
    const level = levelOf(line);
    this.logs[level !== undefined && level >= WARN ? 'error' : 'info'].push(Buffer.from(line));
  }

  tail(log: LogName, length: number): Buffer {
    return this.logs[log].tail(length);
  }
}

/** The numeric `level` of a pino JSON line (undefined for a line that is not one). */
function levelOf(line: string): number | undefined {
  const match = /"level":(\d+)/.exec(line);
  return match ? Number(match[1]) : undefined;
}
