import request from 'supertest';
import type { TestServer, TestUser } from './testServer';

/** Small HTTP helpers shared by the history, point-in-time, restore, event-stream and verify suites. */
export const API = '/api/v1';

export function client(server: TestServer, user: TestUser | null) {
  const agent = request(server.app);
  const wrap = <T extends { set(h: string, v: string): T }>(r: T) => (user ? r.set('Service-Token', user.token) : r);
  return {
    get: (url: string) => wrap(agent.get(`${API}${url}`)),
    post: (url: string) => wrap(agent.post(`${API}${url}`)),
    put: (url: string) => wrap(agent.put(`${API}${url}`)),
    delete: (url: string) => wrap(agent.delete(`${API}${url}`)),
  };
}

export function ok<T = any>(res: request.Response, what: string): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

export async function newFolder(server: TestServer, user: TestUser, parentId: string, name: string, parentType = 'folder'): Promise<string> {
  return ok(await client(server, user).post('/folder').type('form').send({ parentType, parentId, name }), `POST /folder ${name}`)._id;
}

export async function newItem(server: TestServer, user: TestUser, folderId: string, name: string): Promise<string> {
  return ok(await client(server, user).post('/item').query({ folderId, name }), `POST /item ${name}`)._id;
}

/** Uploads `bytes` as a new file of the item; returns the file id. */
export async function addFile(server: TestServer, user: TestUser, itemId: string, bytes: Buffer, name = 'data.bin'): Promise<string> {
  const res = await client(server, user)
    .post('/file')
    .query({ parentType: 'item', parentId: itemId, name, size: bytes.length })
    .set('Content-Type', 'application/octet-stream')
    .send(bytes);
  return ok(res, `POST /file ${name}`)._id;
}

export async function download(server: TestServer, user: TestUser, fileId: string): Promise<request.Response> {
  return client(server, user)
    .get(`/file/${fileId}/download`)
    .buffer(true)
    .parse((res, cb) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => cb(null, Buffer.concat(chunks)));
    });
}

/** The id of one of the user's two default folders (`Public`, `Private`). */
export async function defaultFolder(server: TestServer, user: TestUser, name: 'Public' | 'Private'): Promise<string> {
  const folders = ok<{ _id: string; name: string }[]>(await client(server, user).get(`/folder?parentType=user&parentId=${user._id}`), 'list');
  return folders.find((f) => f.name === name)!._id;
}

export const headPosition = (server: TestServer) => server.runtime.services.eventStore.headPosition();
