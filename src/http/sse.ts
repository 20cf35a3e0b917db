import type { ServerResponse } from 'node:http';

/**
 * A small server-sent-events writer (https://html.spec.whatwg.org/multipage/server-sent-events.html) for route
 * handlers that stream (`RESPONSE_SENT`): headers, `data:` framing (one `data:` line per line of the payload),
 * optional `event:`/`id:`/`retry:` fields, heartbeats as comment lines, and bounded buffering: when a slow client
 * lets the response's write buffer grow past `maxBufferedBytes`, the stream is ended with one final event instead
 * of buffering without bound.
 */

export interface SseEvent {
  data: string;
  /** Event type (`event:`); the client's default `message` when absent. */
  event?: string;
  /** Last-event id (`id:`), echoed by reconnecting clients in `Last-Event-ID`. */
  id?: string;
  /** Reconnection delay hint, in ms (`retry:`). */
  retry?: number;
}

export interface SseOptions {
  /** Interval of `: heartbeat` comment lines, in ms; 0 disables them. Default 15 000. */
  heartbeatMs?: number;
  /** Bound on bytes waiting in the response/socket buffers; beyond it the stream ends. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** The last event written when the bound is exceeded. */
  overflowEvent?: SseEvent;
  /** After `close()`, how long a client that does not read may hold the socket before it is destroyed. Default 10 s. */
  closeGraceMs?: number;
  /** Additional response headers. */
  headers?: Record<string, string>;
}

export const DEFAULT_OVERFLOW_EVENT: SseEvent = {
  event: 'overflow',
  data: JSON.stringify({ message: 'The client did not read the stream fast enough; the stream was closed.' }),
};

const NEWLINE = /\r\n|\r|\n/;

function checkField(name: string, value: string): string {
  if (/[\r\n\0]/.test(value))
    throw new Error(`SSE ${name} must not contain line breaks or NUL: ${JSON.stringify(value)}`);
  return value;
}

/** The wire form of one event, ending with the blank line that dispatches it. */
export function formatSseEvent(event: SseEvent): string {
  let out = '';
  if (event.event !== undefined) out += `event: ${checkField('event', event.event)}\n`;
  if (event.id !== undefined) out += `id: ${checkField('id', event.id)}\n`;
  if (event.retry !== undefined) out += `retry: ${Math.max(0, Math.floor(event.retry))}\n`;
  for (const line of event.data.split(NEWLINE)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** Comment lines (ignored by clients), e.g. heartbeats. */
function formatSseComment(text: string): string {
  return `${text
    .split(NEWLINE)
    .map((line) => `: ${line}`)
    .join('\n')}\n\n`;
}

export class SseWriter {
  private ended = false;
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly closeListeners: (() => void)[] = [];
  private readonly maxBufferedBytes: number;
  private readonly overflowEvent: SseEvent;
  private readonly closeGraceMs: number;
  /** Whether the stream was ended because the client fell behind. */
  overflowed = false;

  private constructor(
    private readonly res: ServerResponse,
    options: SseOptions,
  ) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
    this.overflowEvent = options.overflowEvent ?? DEFAULT_OVERFLOW_EVENT;
    this.closeGraceMs = options.closeGraceMs ?? 10_000;
    res.on('close', () => this.onClosed());
    const heartbeatMs = options.heartbeatMs ?? 15_000;
    if (heartbeatMs > 0) {
      this.heartbeat = setInterval(() => this.comment('heartbeat'), heartbeatMs);
      this.heartbeat.unref();
    }
  }

  /** Sends status 200 and the event-stream headers at once, and returns the writer. */
  static open(res: ServerResponse, options: SseOptions = {}): SseWriter {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Accel-Buffering', 'no');
    for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    return new SseWriter(res, options);
  }

  /** True once the stream was ended by either side. */
  get closed(): boolean {
    return this.ended || this.res.destroyed || this.res.writableEnded;
  }

  /** Writes one event; false if the stream is closed (or just got closed because the client fell behind). */
  send(event: SseEvent | string): boolean {
    return this.write(formatSseEvent(typeof event === 'string' ? { data: event } : event));
  }

  /** Writes a comment (ignored by clients). */
  comment(text: string): boolean {
    return this.write(formatSseComment(text));
  }

  /** Ends the stream, optionally with a last event. Idempotent. */
  close(finalEvent?: SseEvent): void {
    if (!this.closed) {
      if (finalEvent) this.res.write(formatSseEvent(finalEvent));
      this.res.end();
      // A client that stopped reading must not pin the socket (and its buffer) forever.
      const grace = setTimeout(() => {
        if (!this.res.destroyed) this.res.destroy();
      }, this.closeGraceMs);
      grace.unref();
      this.res.once('close', () => clearTimeout(grace));
    }
    this.onClosed();
  }

  /** Runs once when the stream closes for any reason (`close()`, client gone, overflow); at once if it already has. */
  onClose(listener: () => void): void {
    if (this.closed) {
      this.onClosed();
      listener();
      return;
    }
    this.closeListeners.push(listener);
  }

  private write(chunk: string): boolean {
    if (this.closed) return false;
    this.res.write(chunk);
    if (this.res.writableLength > this.maxBufferedBytes) {
      this.overflowed = true;
      this.close(this.overflowEvent);
      return false;
    }
    return true;
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  private onClosed(): void {
    this.ended = true;
    this.stopHeartbeat();
    const listeners = this.closeListeners.splice(0);
    for (const listener of listeners) listener();
  }
}
