import crypto from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { filter } from 'rxjs';
import type { Services } from '../../services';
import { validToken, tokenHasScopes } from '../auth';
import { Scope } from '../../domain/scopes';

/**
 * Girder 5's notification channel, which its web client opens once a user is logged in:
 * `ws://<host>/notifications/me?token=<token>`, each notification a text message `{"type": "progress", "data": …}`
 * (Girder's `UserNotificationsSocket`). Here it forwards the caller's progress records as they are written
 * (docs/web-client.md). A minimal RFC 6455 server: text frames out; close and ping answered; anything else ignored.
 */
export const NOTIFICATION_SOCKET_PATH = '/notifications/me';
const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x80 | opcode, length]) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (length >= 126) {
    header[0] = 0x80 | opcode;
    if (length < 65536) {
      header[1] = 126;
      header.writeUInt16BE(length, 2);
    } else {
      header[1] = 127;
      header.writeBigUInt64BE(BigInt(length), 2);
    }
  }
  return Buffer.concat([header, payload]);
}

/** Reads the client's (masked) frames as they arrive and reports each complete one. */
function readFrames(socket: Duplex, onFrame: (opcode: number, payload: Buffer) => void): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (buffered.length < 2) return;
      const opcode = buffered[0] & 0x0f;
      const masked = (buffered[1] & 0x80) !== 0;
      let length = buffered[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffered.length < 10) return;
        length = Number(buffered.readBigUInt64BE(2));
        offset = 10;
      }
      const maskOffset = offset;
      if (masked) offset += 4;
      if (buffered.length < offset + length) return;
      const payload = Buffer.from(buffered.subarray(offset, offset + length));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i] ^= buffered[maskOffset + (i % 4)];
      buffered = buffered.subarray(offset + length);
      onFrame(opcode, payload);
    }
  });
}

async function accept(services: Services, req: IncomingMessage, socket: Duplex): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const key = req.headers['sec-websocket-key'];
  const token = await validToken(services, url.searchParams.get('token'));
  if (typeof key !== 'string' || !token || !tokenHasScopes(token, [Scope.USER_AUTH])) {
    socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  const acceptKey = crypto.createHash('sha1').update(key + HANDSHAKE_GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey}\r\n\r\n`);
  const subscription = services.notifications.changes$
    .pipe(filter((record) => record.userId === token.userId))
    .subscribe((record) => socket.write(frame(0x1, Buffer.from(JSON.stringify(record)))));
  const stop = () => subscription.unsubscribe();
  socket.on('close', stop);
  socket.on('error', stop);
  readFrames(socket, (opcode, payload) => {
    if (opcode === 0x8) socket.end(frame(0x8, payload.subarray(0, 2)));
    else if (opcode === 0x9) socket.write(frame(0xa, payload));
  });
}

/** Serves the notification socket on an HTTP server; other upgrade requests are refused. */
export function attachNotificationSocket(server: Server, services: Services): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== NOTIFICATION_SOCKET_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    accept(services, req, socket).catch(() => socket.destroy());
  });
}
