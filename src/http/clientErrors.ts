import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { OwnMap } from '../domain/ownMap';

/**
 * What Node's HTTP server answers by itself, before any route sees a request (a request that is not valid HTTP,
 * headers too large, a request that did not arrive within `requestTimeout` or `headersTimeout`), in the documented
 * JSON error format rather than Node's bare status lines; the connection is closed after it, as Node would.
 */
const ANSWERS = new OwnMap<string, { status: number; message: string }>({
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive within the time allowed.' },
  HPE_HEADER_OVERFLOW: { status: 431, message: 'The request headers are too large.' },
});
const NOT_HTTP = { status: 400, message: 'The request is not valid HTTP/1.1.' };

/** The answer to a client error, as bytes for the socket. */
function clientErrorAnswer(code: string | undefined): string {
  const { status, message } = (code !== undefined ? ANSWERS.get(code) : undefined) ?? NOT_HTTP;
  const body = JSON.stringify({ message, type: 'rest' });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

export function answerClientErrors(server: Server): Server {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // An answer under way cannot be followed by another on the same connection (nor can a socket the client reset).
    const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorAnswer(error.code), () => socket.destroy());
  });
  return server;
}
