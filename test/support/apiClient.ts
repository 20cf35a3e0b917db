import request from 'supertest';
import type { TestServer, TestUser } from './testServer';

const api = '/api/v1';

/**
 * Request helpers shared by the HTTP tests: `as(user)` sends under `/api/v1` with the user's token (anonymous for
 * null), and `newItem`/`addFile` create test data through the API, failing loudly when the API refuses.
 */
export function apiClient(serverOf: () => TestServer) {
  const as = (user: TestUser | null) => {
    const agent = request(serverOf().app);
    const wrap = <T extends { set(h: string, v: string): T }>(r: T) => (user ? r.set('Service-Token', user.token) : r);
    return {
      get: (url: string) => wrap(agent.get(`${api}${url}`)),
      post: (url: string) => wrap(agent.post(`${api}${url}`)),
      put: (url: string) => wrap(agent.put(`${api}${url}`)),
      delete: (url: string) => wrap(agent.delete(`${api}${url}`)),
    };
  };

  async function newItem(user: TestUser, folderId: string, name: string): Promise<string> {
    const res = await as(user).post('/item').query({ folderId, name });
    if (res.status !== 200) throw new Error(`POST /item: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body._id;
  }

  /** Adds a file with `content` to an item; returns the file id. */
  async function addFile(user: TestUser, itemId: string, content: string, name = 'data.txt'): Promise<string> {
    const bytes = Buffer.from(content);
    const res = await as(user)
      .post('/file')
      .query({ parentType: 'item', parentId: itemId, name, size: bytes.length })
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);
    if (res.status !== 200) throw new Error(`POST /file: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body._id;
  }

  return { as, newItem, addFile };
}
