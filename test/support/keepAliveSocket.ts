import net from 'node:net';
import { within } from '../../src/ports/within';

/** One answer read off a kept-alive socket: status, headers (lower-case names) and the body as text. */
export interface SocketAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A raw TCP connection to the service that stays open between requests, so that a test can see what one answer
 * leaves behind for the next request on the same connection (what a client or proxy pool would reuse). Requests are
 * written verbatim (`write`); `answer()` reads exactly one response (Content-Length or chunked body) and leaves any
 * later bytes for the next call; `closed()` resolves once the server ended the connection.
 */
export class KeepAliveSocket {
  private buffered = Buffer.alloc(0);
  private ended = false;
  private waiter: (() => void) | undefined;
  private readonly socket: net.Socket;
  private readonly closedPromise: Promise<void>;

  private constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiter?.();
    });
    this.closedPromise = new Promise((resolve) => {
      const done = () => {
        this.ended = true;
        this.waiter?.();
        resolve();
      };
      this.socket.on('end', done);
      this.socket.on('close', done);
    });
    // A reset by the server is an ending like any other here: the assertions say whether it was expected.
    this.socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<KeepAliveSocket> {
    const connection = new KeepAliveSocket(port);
    await new Promise<void>((resolve, reject) => {
      connection.socket.once('connect', resolve);
      connection.socket.once('error', reject);
    });
    return connection;
  }

  /** Writes bytes as they are (a request head, part of a body…). */
  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Whether the server has ended the connection. */
  get isClosed(): boolean {
    return this.ended;
  }

  /** Resolves once the server ended the connection; rejects after `timeoutMs`. */
  closed(timeoutMs = 3000): Promise<void> {
    return within(this.closedPromise, timeoutMs, 'the server (closing the connection)');
  }

  /** Reads the next complete response; rejects if the connection ends first or none arrives within `timeoutMs`. */
  async answer(timeoutMs = 3000): Promise<SocketAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseResponse(this.buffered);
      if (parsed) {
        this.buffered = this.buffered.subarray(parsed.consumed);
        return parsed.answer;
      }
      if (this.ended) throw new Error(`the connection ended before a whole answer: ${this.buffered.toString()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no whole answer within ${timeoutMs} ms: ${this.buffered.toString()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = undefined;
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** One HTTP/1.1 response at the start of `data`, or undefined while it is incomplete. */
function parseResponse(data: Buffer): { answer: SocketAnswer; consumed: number } | undefined {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine, ...lines] = data.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(statusLine.split(' ')[1]);
  let offset = headEnd + 4;
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const eol = data.indexOf('\r\n', offset);
      if (eol < 0) return undefined;
      const size = Number.parseInt(data.subarray(offset, eol).toString('latin1'), 16);
      if (data.length < eol + 2 + size + 2) return undefined;
      parts.push(data.subarray(eol + 2, eol + 2 + size));
      offset = eol + 2 + size + 2;
      if (size === 0) break;
    }
    return { answer: { status, headers, body: Buffer.concat(parts).toString('utf8') }, consumed: offset };
  }
  const length = Number(headers['content-length'] ?? 0);
  if (data.length < offset + length) return undefined;
  return {
    answer: { status, headers, body: data.subarray(offset, offset + length).toString('utf8') },
    consumed: offset + length,
  };
}
