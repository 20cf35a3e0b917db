import request from 'supertest';
import type { TestServer, TestUser } from './testServer';

/** Folder fixtures shared by the folder read and search tests: a GET helper and folder creation through the API. */

export type Caller = TestUser | null;

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

export function folderApi(serverOf: () => TestServer) {
  function get(path: string, caller: Caller, query: Record<string, string | number> = {}) {
    const req = request(serverOf().app).get(`/api/v1${path}`).query(query);
    return caller ? req.set('Service-Token', caller.token) : req;
  }

  /** Creates a folder through POST /folder (and PUT /folder/:id/access when an ACL is given); returns its id. */
  async function createFolder(owner: TestUser, parentType: 'folder' | 'user' | 'collection', parentId: string, name: string, o: FolderOptions = {}) {
    const form: Record<string, string> = { parentType, parentId, name };
    if (o.public !== undefined) form.public = String(o.public);
    if (o.description !== undefined) form.description = o.description;
    if (o.metadata !== undefined) form.metadata = JSON.stringify(o.metadata);
    const created = await request(serverOf().app).post('/api/v1/folder').set('Service-Token', owner.token).type('form').send(form);
    if (created.status !== 200) throw new Error(`POST /folder ${name}: ${created.status} ${JSON.stringify(created.body)}`);
    if (o.access) {
      const set = await request(serverOf().app)
        .put(`/api/v1/folder/${created.body._id}/access`)
        .set('Service-Token', owner.token)
        .type('form')
        .send({ access: JSON.stringify(o.access) });
      if (set.status !== 200) throw new Error(`PUT /folder/:id/access ${name}: ${set.status} ${JSON.stringify(set.body)}`);
    }
    return created.body._id as string;
  }

  /** A subfolder, public unless told otherwise. */
  const sub = (parentId: string, name: string, owner: TestUser, o: FolderOptions = {}) => createFolder(owner, 'folder', parentId, name, { public: true, ...o });

  return { get, createFolder, sub };
}
