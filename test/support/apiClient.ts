import type http from 'node:http';
import request from 'supertest';
import { rawRequest, listen, type RawResponse } from './rawHttp';
import { SseClient } from './sseClient';
import { startTestServer, type TestServer, type TestServerOptions } from './testServer';

/**
 * The one HTTP client the tests talk to the service through. An `ApiClient` is bound to a started test server;
 * requests go out in a session: `api.as(alice).get('/folder/x')` sends under `/api/v1` with alice's token,
 * `api.anonymous()` with none, `api.site()` outside `/api/v1` (`/healthz`, `/static/...`). Each session method
 * returns the supertest request, so a test still shapes headers and bodies and asserts on the response itself.
 * The fixture helpers (`createUser`, `createFolder`, `newItem`, `addFile`, ...) go through the API as well and fail
 * loudly when it refuses, so a broken fixture never reads as a failed assertion.
 */

export const API_PREFIX = '/api/v1';

export interface TestUser {
  _id: string;
  login: string;
  token: string;
  admin: boolean;
}

/** Who sends a request: a user (their login token), a bare token (scoped, expired, API-key issued), or nobody. */
export type Caller = TestUser | string | null | undefined;

export type Session = ReturnType<typeof session>;

export interface AccessInput {
  users: { id: string; level: number }[];
  groups: { id: string; level: number }[];
}

export interface FolderOptions {
  public?: boolean;
  description?: string;
  metadata?: Record<string, unknown>;
  /** Replaces the inherited ACL (PUT /folder/:id/access) right after creation. */
  access?: AccessInput;
}

/** A real listening socket on the app, for what supertest cannot do: raw bytes, server-sent events, websockets. */
export interface Listener {
  port: number;
  /** The node server, for what hooks into it (the notification WebSocket's upgrade handler). */
  server: http.Server;
  /** `http://127.0.0.1:<port>` (no prefix). */
  origin: string;
  /** Writes `head` and `body` verbatim on a fresh socket (rawHttp.ts). */
  raw(head: string, body?: string, timeoutMs?: number): Promise<RawResponse>;
  /** Opens a server-sent event stream on `path` under `/api/v1`. */
  sse(path: string, headers?: Record<string, string>): SseClient;
  close(): Promise<void>;
}

function session(app: TestServer['app'], prefix: string, token: string | null) {
  const agent = request(app);
  const withToken = (r: request.Test) => (token ? r.set('Service-Token', token) : r);
  return {
    get: (url: string) => withToken(agent.get(`${prefix}${url}`)),
    post: (url: string) => withToken(agent.post(`${prefix}${url}`)),
    put: (url: string) => withToken(agent.put(`${prefix}${url}`)),
    patch: (url: string) => withToken(agent.patch(`${prefix}${url}`)),
    delete: (url: string) => withToken(agent.delete(`${prefix}${url}`)),
    head: (url: string) => withToken(agent.head(`${prefix}${url}`)),
    options: (url: string) => withToken(agent.options(`${prefix}${url}`)),
  };
}

const tokenOf = (caller: Caller): string | null =>
  caller == null ? null : typeof caller === 'string' ? caller || null : caller.token;

/** A fixture step's body; fails with the response when the API refused it. */
export function ok<T = any>(res: request.Response, what = 'fixture request'): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

/**
 * A supertest parser that keeps the body as bytes whatever its type (the response is the underlying message stream).
 */
export function binary(res: unknown, callback: (error: Error | null, body: Buffer) => void): void {
  const stream = res as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
}

export class ApiClient {
  private readonly listeners: Listener[] = [];

  constructor(readonly server: TestServer) {}

  get app() {
    return this.server.app;
  }

  get runtime() {
    return this.server.runtime;
  }

  /** Requests under `/api/v1` sent by `caller` (anonymous for null). */
  as(caller: Caller): Session {
    return session(this.app, API_PREFIX, tokenOf(caller));
  }

  anonymous(): Session {
    return this.as(null);
  }

  /** Requests outside `/api/v1`: health probes, the web client's pages and static files. */
  site(): Session {
    return session(this.app, '', null);
  }

  /** Registers a user (the first one becomes site admin) and returns it with a login token. */
  async createUser(login: string, overrides: Record<string, string> = {}): Promise<TestUser> {
    const form = {
      login,
      email: `${login}@example.com`,
      firstName: 'First',
      lastName: 'Last',
      password: 'password1',
      ...overrides,
    };
    const body = ok(await this.anonymous().post('/user').type('form').send(form), `createUser ${login}`);
    return { _id: body._id, login, token: body.authToken.token, admin: body.admin };
  }

  /**
   * Lets uploads in small chunks through: fixtures send chunks of a few bytes, while a chunk that does not end its
   * upload must otherwise be at least `core.upload_minimum_chunk_size` (5 MiB, Girder's default).
   */
  async allowSmallChunks(admin: TestUser): Promise<void> {
    ok(
      await this.as(admin)
        .put('/system/setting')
        .type('form')
        .send({ key: 'core.upload_minimum_chunk_size', value: '0' }),
      'allowSmallChunks',
    );
  }

  /** Creates a folder through POST /folder (and PUT /folder/:id/access when an ACL is given); returns its id. */
  async createFolder(
    owner: TestUser,
    parentType: 'folder' | 'user' | 'collection',
    parentId: string,
    name: string,
    o: FolderOptions = {},
  ): Promise<string> {
    const form: Record<string, string> = { parentType, parentId, name };
    if (o.public !== undefined) form.public = String(o.public);
    if (o.description !== undefined) form.description = o.description;
    if (o.metadata !== undefined) form.metadata = JSON.stringify(o.metadata);
    const id = ok(await this.as(owner).post('/folder').type('form').send(form), `POST /folder ${name}`)._id as string;
    if (o.access) ok(await this.putFolderAccess(owner, id, o.access), `PUT /folder/:id/access ${name}`);
    return id;
  }

  /** `PUT /folder/:id/access` as `caller` with this access list (and other form fields, such as `recurse`). */
  putFolderAccess(
    caller: Caller,
    folderId: string,
    access: unknown,
    fields: Record<string, string> = {},
  ): request.Test {
    return this.as(caller)
      .put(`/folder/${folderId}/access`)
      .type('form')
      .send({ access: JSON.stringify(access), ...fields });
  }

  /** A subfolder, public unless told otherwise. */
  subfolder(owner: TestUser, parentId: string, name: string, o: FolderOptions = {}): Promise<string> {
    return this.createFolder(owner, 'folder', parentId, name, { public: true, ...o });
  }

  /** A folder in a folder (no options: the parent's defaults). */
  newFolder(owner: TestUser, parentId: string, name: string): Promise<string> {
    return this.createFolder(owner, 'folder', parentId, name);
  }

  async newItem(user: TestUser, folderId: string, name: string): Promise<string> {
    return ok(await this.as(user).post('/item').query({ folderId, name }), `POST /item ${name}`)._id;
  }

  /**
   * A folder `tree` under `parentId` holding `width` folders with an item each, doubled `doublings` times by copying
   * the root into itself; with how many folders and entries (folders + items) it holds.
   */
  async buildTree(
    user: TestUser,
    parentId: string,
    width: number,
    doublings: number,
  ): Promise<{ id: string; folders: number; entries: number }> {
    const root = ok(await this.as(user).post('/folder').query({ parentType: 'folder', parentId, name: 'tree' }));
    for (let i = 0; i < width; i++) {
      const folder = ok(
        await this.as(user)
          .post('/folder')
          .query({ parentType: 'folder', parentId: root._id, name: `node ${i}` }),
      );
      await this.newItem(user, folder._id, `item ${i}`);
    }
    for (let n = 0; n < doublings; n++)
      ok(await this.as(user).post(`/folder/${root._id}/copy`).query({ parentType: 'folder', parentId: root._id }));
    return { id: root._id, folders: (1 + width) * 2 ** doublings, entries: (1 + 2 * width) * 2 ** doublings };
  }

  /** Uploads `content` as a new file of the item (named `data.txt` for text, `data.bin` for bytes); returns the file
   * id. */
  async addFile(
    user: TestUser,
    itemId: string,
    content: string | Buffer,
    name = typeof content === 'string' ? 'data.txt' : 'data.bin',
  ): Promise<string> {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    const res = await this.as(user)
      .post('/file')
      .query({ parentType: 'item', parentId: itemId, name, size: bytes.length })
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);
    return ok(res, `POST /file ${name}`)._id;
  }

  /** GET /file/:id/download with the body as bytes. */
  download(caller: Caller, fileId: string): request.Test {
    return this.as(caller).get(`/file/${fileId}/download`).buffer(true).parse(binary);
  }

  /** The id of one of the user's two default folders (`Public`, `Private`). */
  async defaultFolder(user: TestUser, name: 'Public' | 'Private'): Promise<string> {
    const folders = ok<{ _id: string; name: string }[]>(
      await this.as(user).get(`/folder?parentType=user&parentId=${user._id}`),
      'list',
    );
    return folders.find((f) => f.name === name)!._id;
  }

  /** The event store's head position (what `since=` and point-in-time reads are measured against). */
  headPosition(): Promise<bigint> {
    return this.runtime.services.eventStore.headPosition();
  }

  /** Listens on an ephemeral port; closed with the client. */
  async listen(): Promise<Listener> {
    const server = await listen(this.app);
    const origin = `http://127.0.0.1:${server.port}`;
    const listener: Listener = {
      port: server.port,
      server: server.server,
      origin,
      raw: (head, body, timeoutMs) => rawRequest(server.port, head, body, timeoutMs),
      sse: (path, headers = {}) => new SseClient(`${origin}${API_PREFIX}${path}`, headers),
      close: async () => {
        this.listeners.splice(this.listeners.indexOf(listener), 1);
        await server.close();
      },
    };
    this.listeners.push(listener);
    return listener;
  }

  async close(): Promise<void> {
    for (const listener of [...this.listeners]) await listener.close();
    await this.server.close();
  }
}

/** A fresh service (testServer.ts) and a client bound to it. */
export async function startApi(env: Record<string, string> = {}, options: TestServerOptions = {}): Promise<ApiClient> {
  return new ApiClient(await startTestServer(env, options));
}
