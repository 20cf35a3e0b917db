import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Services } from '../../services';
import { activeCaller, tokenHasScopes } from '../auth';
import { TOKEN_PARAM } from '../secrets';
import { claimStreamSlot } from '../streamSlots';
import { TooManyRequestsError } from '../tooManyRequests';
import { Scope } from '../../domain/scopes';

/**
 * Girder 5's notification channel, which its web client opens once a user is logged in:
 * `ws://<host>/notifications/me?token=<token>`, each notification a text message (Girder's `UserNotificationsSocket`).
 * Here it forwards the caller's progress records as they are written, by this process or any other sharing the
 * notification store (docs/web-client.md). The protocol is the `ws` library's; the client sends nothing we read, so
 * incoming messages are capped small and ignored.
 */
export const NOTIFICATION_SOCKET_PATH = '/notifications/me';
/** The client never sends data; a larger frame closes the socket (1009) instead of being buffered. */
const MAX_INCOMING_BYTES = 4 * 1024;

function refuse(socket: Duplex, status: '401 Unauthorized' | '404 Not Found'): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** A refusal in the error format: the caller holds as many streams as allowed. */
function refuseTooMany(socket: Duplex, error: TooManyRequestsError): void {
  const body = JSON.stringify({ message: error.message, type: 'rest' });
  socket.end(
    `HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

function forwardNotifications(services: Services, ws: WebSocket, userId: string): void {
  const subscription = services.notifications
    .changesFor({ userId, tokenId: null })
    .subscribe({ next: (record) => ws.send(JSON.stringify(record)), complete: () => ws.close(1001) });
  ws.on('close', () => subscription.unsubscribe());
  ws.on('error', () => ws.terminate());
}

/** Serves the notification socket on an HTTP server; other upgrade requests are refused. */
export function attachNotificationSocket(server: Server, services: Services): void {
  // `ws` is loaded with the first socket a client opens, not at start-up (it is a tenth of a bare start's modules).
  let sockets: WebSocketServer | undefined;
  const socketServer = (): WebSocketServer => {
    if (!sockets) {
      const ws = require('ws') as typeof import('ws');
      sockets = new ws.WebSocketServer({ noServer: true, maxPayload: MAX_INCOMING_BYTES });
    }
    return sockets;
  };
  server.on('close', () => sockets?.close());
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== NOTIFICATION_SOCKET_PATH) {
      refuse(socket, '404 Not Found');
      return;
    }
    activeCaller(services, url.searchParams.get(TOKEN_PARAM))
      .then(({ token, user }) => {
        if (!token || !user || !tokenHasScopes(token, [Scope.USER_AUTH])) {
          refuse(socket, '401 Unauthorized');
          return;
        }
        const userId = user._id;
        try {
          claimStreamSlot(services, userId, req, socket);
        } catch (error) {
          if (!(error instanceof TooManyRequestsError)) throw error;
          refuseTooMany(socket, error);
          return;
        }
        socketServer().handleUpgrade(req, socket, head, (ws) => forwardNotifications(services, ws, userId));
      })
      .catch(() => socket.destroy());
  });
}
