import http from 'node:http';

/** One server-sent event as a client sees it. */
export interface SseMessage {
  id: string;
  event: string;
  data: string;
  json: any;
  /** The event's block as sent, with its blank-line terminator. */
  raw: string;
}

/**
 * A raw SSE reader over node:http (no EventSource polyfill): parses `id:`/`event:`/`data:` fields, skips comments,
 * notes the end of the stream. Used by tests and by the multi-process chaos run (it has no jest dependency).
 */
export class SseClient {
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  events: SseMessage[] = [];
  /** Everything received, comments included. */
  body = '';
  ended = false;
  /** When the server ended the response (null while it is open, or when it was cut off rather than ended). */
  endedAt: number | null = null;
  readonly opened: Promise<void>;
  /** Resolves once the stream is over: ended by the server, cut off, or never opened. */
  readonly finished: Promise<void>;
  private finish!: () => void;
  private request!: http.ClientRequest;
  private buffer = '';
  private waiters: (() => void)[] = [];

  constructor(url: string, headers: Record<string, string> = {}) {
    this.finished = new Promise((resolve) => {
      this.finish = resolve;
    });
    this.opened = new Promise((resolve, reject) => {
      this.request = http.get(url, { headers, agent: false }, (res) => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        resolve();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => this.onChunk(chunk));
        const end = () => {
          this.ended = true;
          this.notify();
          this.finish();
        };
        res.on('end', () => {
          this.endedAt ??= Date.now();
          end();
        });
        res.on('close', end);
        res.on('error', end);
      });
      this.request.on('error', (error) => {
        this.ended = true;
        this.notify();
        this.finish();
        reject(error);
      });
    });
    this.opened.catch(() => undefined);
  }

  /** The id of the last event received ('' before the first). */
  get lastId(): string {
    return this.events.at(-1)?.id ?? '';
  }

  private onChunk(chunk: string): void {
    this.body += chunk;
    this.buffer += chunk;
    let boundary: number;
    while ((boundary = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, boundary);
      this.buffer = this.buffer.slice(boundary + 2);
      const fields: Partial<Record<string, string[]>> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(': ');
        (fields[line.slice(0, colon)] ??= []).push(line.slice(colon + 2));
      }
      if (!fields.data) continue;
      const data = fields.data.join('\n');
      let json: unknown = null;
      try {
        json = JSON.parse(data);
      } catch {
        // not JSON: `data` has it
      }
      this.events.push({
        id: fields.id?.[0] ?? '',
        event: fields.event?.[0] ?? 'message',
        data,
        json,
        raw: `${block}\n\n`,
      });
    }
    this.notify();
  }

  private notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Resolves once `predicate` holds; rejects when the stream ends first or after `ms`. */
  async waitFor(predicate: (events: SseMessage[]) => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate(this.events)) {
      if (this.ended)
        throw new Error(
          `stream ended first after ${this.events.length} events (${this.events.map((e) => e.id).join(',')})`,
        );
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; saw ${this.events.map((e) => `${e.id}:${e.event}`).join(', ')}`);
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  }

  close(): void {
    this.request.destroy();
  }
}
