import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerClientErrors } from '../../src/http/clientErrors';
import { startApi, ok, type ApiClient, type TestUser } from '../support/apiClient';
import { KeepAliveSocket, type SocketAnswer } from '../support/keepAliveSocket';

/**
 * Issue 28, rule 3: every answer leaves the connection usable or closes it. Each row sends one request that is
 * answered before its body is read whole (a refusal before or while the body is read, or a body that stalls) on a
 * kept-alive connection, then checks what that connection is good for: the next request on it is answered, or the
 * server said `Connection: close` and closed it. A new refusal path is one more row.
 */

const IDLE_SECONDS = 0.4;
const MiB = 1024 * 1024;

let api: ApiClient;
let admin: TestUser;
let bob: TestUser;
let port: number;
let itemId: string;
let privateFolder: string;
let uploadId: string;

beforeAll(async () => {
  api = await startApi({ BODY_IDLE_TIMEOUT_SECONDS: String(IDLE_SECONDS) });
  admin = await api.createUser('admin');
  await api.allowSmallChunks(admin);
  bob = await api.createUser('bobby');
  privateFolder = await api.defaultFolder(admin, 'Private');
  itemId = await api.newItem(admin, privateFolder, 'target');
  uploadId = ok(
    await api.as(admin).post('/file').query({ parentType: 'item', parentId: itemId, name: 'ten.bin', size: 10 }),
  )._id;
  ({ port } = await api.listen());
});
afterAll(async () => api.close());

/** A request head (no blank line) with a body of `bodyLength` bytes declared by Content-Length. */
const head = (requestLine: string, headers: Record<string, string | number>) =>
  `${requestLine} HTTP/1.1\r\nHost: service\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

/** Writes `total` bytes of 'x' in 256 KiB writes (what a client streaming an upload does). */
function sendBytes(socket: KeepAliveSocket, total: number): void {
  const piece = Buffer.alloc(256 * 1024, 'x');
  for (let sent = 0; sent < total; sent += piece.length)
    socket.write(piece.subarray(0, Math.min(piece.length, total - sent)));
}

/** The same bytes in HTTP/1.1 chunked framing, with the last chunk. */
function sendChunked(socket: KeepAliveSocket, total: number): void {
  const piece = Buffer.alloc(256 * 1024, 'x');
  for (let sent = 0; sent < total; sent += piece.length) {
    const part = piece.subarray(0, Math.min(piece.length, total - sent));
    socket.write(`${part.length.toString(16)}\r\n`);
    socket.write(part);
    socket.write('\r\n');
  }
  socket.write('0\r\n\r\n');
}

interface Refusal {
  name: string;
  /** Writes the request, whole or in part. */
  send(socket: KeepAliveSocket): void;
  status: number;
  body: unknown;
  /** What the connection is good for afterwards. */
  then: 'reused' | 'closed';
}

const token = (user: TestUser) => ({ 'Service-Token': user.token });

/** The rows; a function, as they name fixtures made in beforeAll. */
const refusals = (): Refusal[] => [
  {
    name: 'a JSON body over the 16 MiB limit (413)',
    send(socket) {
      const length = 16 * MiB + 1;
      socket.write(
        head(`PUT /api/v1/item/${itemId}/metadata`, {
          ...token(admin),
          'Content-Type': 'application/json',
          'Content-Length': length,
        }),
      );
      sendBytes(socket, length);
    },
    status: 413,
    body: { message: 'Request entity too large (the limit is 16777216 bytes).', type: 'rest' },
    then: 'reused',
  },
  {
    name: 'a bad parameter of an upload that carries its bytes (400 before the body is read)',
    send(socket) {
      socket.write(
        head(`POST /api/v1/file?parentType=nothing&parentId=${itemId}&name=a.bin&size=${MiB}`, {
          ...token(admin),
          'Content-Type': 'application/octet-stream',
          'Content-Length': MiB,
        }),
      );
      sendBytes(socket, MiB);
    },
    status: 400,
    body: {
      message: 'Invalid value for parentType: "nothing". Allowed values: folder, item.',
      type: 'rest',
    },
    then: 'reused',
  },
  {
    name: 'an anonymous upload chunk (401 before the body is read)',
    send(socket) {
      socket.write(
        head(`POST /api/v1/file/chunk?uploadId=${uploadId}&offset=0`, {
          'Content-Type': 'application/octet-stream',
          'Content-Length': MiB,
        }),
      );
      sendBytes(socket, MiB);
    },
    status: 401,
    body: { message: 'You must be logged in.', type: 'access' },
    then: 'reused',
  },
  {
    name: "an upload into another user's private folder (403 before the body is read)",
    send(socket) {
      socket.write(
        head(`POST /api/v1/file?parentType=item&parentId=${itemId}&name=b.bin&size=${MiB}`, {
          ...token(bob),
          'Content-Type': 'application/octet-stream',
          'Content-Length': MiB,
        }),
      );
      sendBytes(socket, MiB);
    },
    status: 403,
    // A getter: the ids exist once beforeAll has run.
    get body() {
      return { message: `Write access denied for item ${itemId} (user ${bob._id}).`, type: 'access' };
    },
    then: 'reused',
  },
  {
    name: 'a chunk declared longer than the upload has left (400 before the body is read)',
    send(socket) {
      socket.write(
        head(`POST /api/v1/file/chunk?uploadId=${uploadId}&offset=0`, {
          ...token(admin),
          'Content-Type': 'application/octet-stream',
          'Content-Length': MiB,
        }),
      );
      sendBytes(socket, MiB);
    },
    status: 400,
    body: { message: 'Received too many bytes.', type: 'validation' },
    then: 'reused',
  },
  {
    name: 'a new file whose body is longer than its size (400 before the body is read)',
    send(socket) {
      socket.write(
        head(`POST /api/v1/file?parentType=item&parentId=${itemId}&name=c.bin&size=10`, {
          ...token(admin),
          'Content-Type': 'application/octet-stream',
          'Content-Length': MiB,
        }),
      );
      sendBytes(socket, MiB);
    },
    status: 400,
    body: { message: 'Received too many bytes.', type: 'validation' },
    then: 'reused',
  },
  {
    name: 'a chunk sent as multipart form data (400 before the body is read)',
    send(socket) {
      socket.write(
        head(`POST /api/v1/file/chunk?uploadId=${uploadId}&offset=0`, {
          ...token(admin),
          'Content-Type': 'multipart/form-data; boundary=b',
          'Content-Length': MiB,
        }),
      );
      sendBytes(socket, MiB);
    },
    status: 400,
    body: { message: 'Send the chunk as the raw request body, not as multipart form data.', type: 'rest' },
    then: 'reused',
  },
  {
    name: 'a chunk of unknown length that goes past the upload (400 while the body is read)',
    send(socket) {
      socket.write(
        head(`POST /api/v1/file/chunk?uploadId=${uploadId}&offset=0`, {
          ...token(admin),
          'Content-Type': 'application/octet-stream',
          'Transfer-Encoding': 'chunked',
        }),
      );
      sendChunked(socket, 4 * MiB);
    },
    status: 400,
    body: { message: 'Received too many bytes.', type: 'validation' },
    then: 'closed',
  },
  {
    name: 'a refusal of a body declared longer than what is drained (401, 100 MiB declared)',
    send(socket) {
      socket.write(
        head(`POST /api/v1/file/chunk?uploadId=${uploadId}&offset=0`, {
          'Content-Type': 'application/octet-stream',
          'Content-Length': 100 * MiB,
        }),
      );
      sendBytes(socket, MiB);
    },
    status: 401,
    body: { message: 'You must be logged in.', type: 'access' },
    then: 'closed',
  },
  {
    name: 'an unknown API route with a body (400)',
    send(socket) {
      socket.write(head('POST /api/v1/folder/nothing/here', { ...token(admin), 'Content-Length': MiB }));
      sendBytes(socket, MiB);
    },
    status: 400,
    body: { message: 'No matching route for "POST nothing/here"', type: 'rest' },
    then: 'reused',
  },
  {
    name: 'an unknown path outside the API with a body (404)',
    send(socket) {
      socket.write(head('POST /nowhere', { 'Content-Length': MiB }));
      sendBytes(socket, MiB);
    },
    status: 404,
    body: { message: "The path '/nowhere' was not found.", type: 'rest' },
    then: 'reused',
  },
  {
    name: 'an upload chunk shorter than its Content-Length (408 after the idle time)',
    send(socket) {
      socket.write(
        head(`POST /api/v1/file/chunk?uploadId=${uploadId}&offset=0`, {
          ...token(admin),
          'Content-Type': 'application/octet-stream',
          'Content-Length': 8,
        }),
      );
      socket.write('0123');
    },
    status: 408,
    body: { message: `The request body stopped arriving: no byte came for ${IDLE_SECONDS} s.`, type: 'rest' },
    then: 'closed',
  },
  {
    name: 'a JSON body that stalls (408 after the idle time)',
    send(socket) {
      socket.write(
        head(`PUT /api/v1/item/${itemId}/metadata`, {
          ...token(admin),
          'Content-Type': 'application/json',
          'Content-Length': 100,
        }),
      );
      socket.write('{"a":');
    },
    status: 408,
    body: { message: `The request body stopped arriving: no byte came for ${IDLE_SECONDS} s.`, type: 'rest' },
    then: 'closed',
  },
];

/** The next request on the same connection, and its answer. */
async function nextRequest(socket: KeepAliveSocket): Promise<SocketAnswer> {
  socket.write(head('GET /api/v1/system/version', {}));
  return socket.answer();
}

describe.each(refusals().map((row) => [row.name, row.then] as const))('after %s', (name, then) => {
  it(
    then === 'reused' ? 'answers the next request on the connection' : 'says so and closes the connection',
    async () => {
      const refusal = refusals().find((row) => row.name === name)!;
      const socket = await KeepAliveSocket.open(port);
      try {
        refusal.send(socket);
        const answer = await socket.answer(5000);
        expect({ status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({
          status: refusal.status,
          body: refusal.body,
        });
        if (refusal.then === 'reused') {
          expect(answer.headers.connection).toBe('keep-alive');
          const next = await nextRequest(socket);
          expect(next.status).toBe(200);
          expect(JSON.parse(next.body)).toMatchObject({ apiVersion: 'v1' });
        } else {
          expect(answer.headers.connection).toBe('close');
          await socket.closed();
        }
      } finally {
        socket.destroy();
      }
    },
  );
});

describe('the upload behind the refusals', () => {
  it('still takes its ten bytes: nothing of the refused chunks was recorded', async () => {
    const res = await api
      .as(admin)
      .post('/file/chunk')
      .query({ uploadId, offset: 0 })
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('0123456789'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ _modelType: 'file', name: 'ten.bin', size: 10 });
  });
});

describe("what Node's HTTP parser refuses before any route", () => {
  it.each([
    ['a request that is not HTTP', 'NOT HTTP AT ALL\r\n\r\n', 400, 'The request is not valid HTTP/1.1.'],
    [
      'headers over the size limit',
      head('GET /api/v1/system/version', { 'X-Padding': 'x'.repeat(20 * 1024) }),
      431,
      'The request headers are too large.',
    ],
  ])('answers %s in the JSON error format and closes the connection', async (_name, request, status, message) => {
    const socket = await KeepAliveSocket.open(port);
    try {
      socket.write(request);
      const answer = await socket.answer();
      expect({
        status: answer.status,
        connection: answer.headers.connection,
        body: JSON.parse(answer.body) as unknown,
      }).toEqual({
        status,
        connection: 'close',
        body: { message, type: 'rest' },
      });
      await socket.closed();
    } finally {
      socket.destroy();
    }
  });
});

it("answers headers that stop arriving (Node's headersTimeout) with a JSON 408 and closes the connection", async () => {
  const server = answerClientErrors(
    http.createServer({ headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 50 }, api.app),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const socket = await KeepAliveSocket.open((server.address() as AddressInfo).port);
  try {
    socket.write('GET /api/v1/system/version HTTP/1.1\r\nHost: service\r\n');
    const answer = await socket.answer();
    expect({
      status: answer.status,
      connection: answer.headers.connection,
      body: JSON.parse(answer.body) as unknown,
    }).toEqual({
      status: 408,
      connection: 'close',
      body: { message: 'The request did not arrive within the time allowed.', type: 'rest' },
    });
    await socket.closed();
  } finally {
    socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
