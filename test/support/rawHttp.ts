import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { answerClientErrors } from '../../src/http/clientErrors';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Listens on an ephemeral port so tests can send requests supertest cannot shape (no length, chunked DELETE). */
export async function listen(app: Express): Promise<{ port: number; server: http.Server; close(): Promise<void> }> {
  // As the service's own server does (src/cli/main.ts): Node's own refusals in the JSON error format.
  const server = answerClientErrors(http.createServer(app));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes `head` (request line and headers, without the blank line) and `body` verbatim on a fresh socket and reads
 * the response until the server closes it (`Connection: close` is added). Fails after `timeoutMs`.
 */
export function rawRequest(port: number, head: string, body = '', timeoutMs = 3000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no response within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      let rest = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        let decoded = '';
        for (;;) {
          const eol = rest.indexOf('\r\n');
          const size = Number.parseInt(rest.slice(0, eol), 16);
          if (!size) break;
          decoded += rest.slice(eol + 2, eol + 2 + size);
          rest = rest.slice(eol + 2 + size + 2);
        }
        rest = decoded;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest });
    });
  });
}
