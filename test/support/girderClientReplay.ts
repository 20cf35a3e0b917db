import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';

/**
 * A TypeScript transcription of girder_client (clients/python/girder_client/__init__.py, identical in Girder 3.x and
 * master) for the methods the CLI's `upload` and `download` use, sending exactly the HTTP requests the Python client
 * sends through `requests`:
 * - every parameter goes in the query string (`params=`), `None` values are dropped, booleans become `True`/`False`,
 *   values are encoded with `quote_plus`, in the dict's insertion order;
 * - every request carries `Girder-Token: <token>` (the empty string before login), except the Basic login which
 *   removes it; plus requests' default `User-Agent`, `Accept-Encoding`, `Accept` and `Connection` headers;
 * - a body is sent with its Content-Length and no Content-Type; a POST/PUT/DELETE without a body sends
 *   `Content-Length: 0`;
 * - redirects are followed as `requests` follows them (see `send`);
 * - 200 and 201 are success, anything else raises HttpError.
 * Method names follow the Python ones so that a test reads like the Python code. Every request is recorded in
 * `requests`. Differences: `upload` takes paths, not glob patterns; `mimetypes.guess_type` is a small table;
 * progress reporting, callbacks, the disk cache and dry runs are left out.
 */

export const DEFAULT_PAGE_LIMIT = 50;
const REQ_BUFFER_SIZE = 65536;
/** requests' DEFAULT_REDIRECT_LIMIT. */
const MAX_REDIRECTS = 30;

type Param = string | number | boolean | null | undefined;
type Params = Record<string, Param>;
/** Responses are used as loosely as the Python client uses its dicts. */
type Json = any;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly responseText: string,
    readonly url: string,
    readonly method: string,
  ) {
    super(`HTTP error ${status}: ${method} ${url}\nResponse text: ${responseText}`);
    this.name = 'HttpError';
  }
}
export class AuthenticationError extends Error {
  constructor() {
    super('Authentication failed.');
    this.name = 'AuthenticationError';
  }
}
export class IncorrectUploadLengthError extends Error {
  constructor(
    message: string,
    readonly upload: Json,
  ) {
    super(message);
    this.name = 'IncorrectUploadLengthError';
  }
}
export class IncompleteResponseError extends Error {
  constructor(message: string, expected: number, received: number) {
    super(`${message} (${received} of ${expected} bytes received)`);
    this.name = 'IncompleteResponseError';
  }
}

/** One request as it went on the wire. */
export interface RecordedRequest {
  method: string;
  /** Path below the API root, with the query string as sent (a redirect elsewhere: the whole URL). */
  url: string;
  headers: Record<string, string>;
  bodyLength: number;
  status: number;
}

/** A readable source with Python's `read(size)` semantics: at most `size` bytes, an empty buffer at the end. */
export interface ByteStream {
  read(size: number): Promise<Buffer>;
}

export function bufferStream(data: Buffer): ByteStream {
  let position = 0;
  return {
    async read(size: number) {
      const chunk = data.subarray(position, position + Math.max(size, 0));
      position += chunk.length;
      return chunk;
    },
  };
}

/** `open(path, 'rb')`, closed by `close()`. */
async function openFile(filePath: string): Promise<ByteStream & { close(): Promise<void> }> {
  const handle = await fs.promises.open(filePath, 'r');
  return {
    async read(size: number) {
      const buffer = Buffer.alloc(Math.max(size, 0));
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    },
    close: () => handle.close(),
  };
}

/** Python's `urllib.parse.quote_plus`. */
function quotePlus(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** requests' rendering of a parameter value (`str(value)`). */
function pythonStr(value: string | number | boolean): string {
  if (value === true) return 'True';
  if (value === false) return 'False';
  return String(value);
}

/** Python's comparison of two lists of strings (`a >= b`). */
function listGreaterOrEqual(a: string[], b: string[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] > b[i];
  }
  return a.length >= b.length;
}

/** The part of `mimetypes.guess_type` the tests need (unknown extensions give null, as Python's None). */
const MIME_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.json': 'application/json',
  '.bin': 'application/octet-stream',
  '.csv': 'text/csv',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.zip': 'application/zip',
  '.html': 'text/html',
};
export const guessType = (filePath: string): string | null => MIME_TYPES[path.extname(filePath).toLowerCase()] ?? null;

/** `_safeMakedirs`. */
const safeMakedirs = (dir: string) => fs.mkdirSync(dir, { recursive: true });

export interface RequestOptions {
  parameters?: Params;
  data?: Buffer;
  /** Replaces default headers; a null value removes the header (requests drops None headers). */
  headers?: Record<string, string | null>;
  auth?: [string, string];
  jsonResp?: boolean;
}

export class GirderClient {
  /** The current maximum chunk size for uploading file chunks (an instance may lower it, as in Python). */
  MAX_CHUNK_SIZE = 1024 * 1024 * 64;
  readonly urlBase: string;
  token = '';
  readonly requests: RecordedRequest[] = [];
  private serverVersion: string[] = [];

  constructor(apiUrl: string) {
    this.urlBase = apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`;
  }

  // ---- transport -------------------------------------------------------------------------------------------------

  private urlFor(route: string, parameters: Params = {}): string {
    const query = Object.entries(parameters)
      .filter((entry): entry is [string, string | number | boolean] => entry[1] !== null && entry[1] !== undefined)
      .map(([key, value]) => `${quotePlus(key)}=${quotePlus(pythonStr(value))}`)
      .join('&');
    const url = this.urlBase + route;
    if (!query) return url;
    return url.includes('?') ? `${url}&${query}` : `${url}?${query}`;
  }

  /**
   * Sends one request and resolves with the response (its body unread), following redirects as `requests` does
   * (Session.resolve_redirects, allow_redirects defaults to True): at most 30; a 303, and a 302 or a POST's 301, goes
   * on as a GET without its body (Content-Length dropped); a 307/308 repeats the method and body; Authorization is
   * dropped when the host changes; every other header (Girder-Token too) goes along. Each hop is recorded.
   */
  private async send(method: string, url: string, options: RequestOptions): Promise<http.IncomingMessage> {
    const headers: Record<string, string> = {
      'User-Agent': 'python-requests/2.32.3',
      'Accept-Encoding': 'gzip, deflate',
      Accept: '*/*',
      Connection: 'keep-alive',
    };
    const extra: Record<string, string | null> = { 'Girder-Token': this.token, ...options.headers };
    for (const [name, value] of Object.entries(extra)) {
      if (value === null) delete headers[name];
      else headers[name] = value;
    }
    if (options.auth)
      headers.Authorization = `Basic ${Buffer.from(`${options.auth[0]}:${options.auth[1]}`).toString('base64')}`;
    let body = options.data;
    if (body) headers['Content-Length'] = String(body.length);
    else if (method !== 'GET' && method !== 'HEAD') headers['Content-Length'] = '0';
    let hop = { method, url };
    for (let redirects = 0; ; redirects += 1) {
      const res = await this.sendOnce(hop.method, hop.url, headers, body);
      const location = res.headers.location;
      if (![301, 302, 303, 307, 308].includes(res.statusCode ?? 0) || !location) return res;
      if (redirects === MAX_REDIRECTS) throw new Error(`Exceeded ${MAX_REDIRECTS} redirects.`);
      res.resume();
      const next = new URL(location, hop.url);
      const status = res.statusCode ?? 0;
      const toGet =
        (status === 303 && hop.method !== 'HEAD') ||
        (status === 302 && hop.method !== 'HEAD') ||
        (status === 301 && hop.method === 'POST');
      if (status !== 307 && status !== 308) {
        delete headers['Content-Length'];
        body = undefined;
      }
      if (next.host !== new URL(hop.url).host) delete headers.Authorization;
      hop = { method: toGet ? 'GET' : hop.method, url: next.href };
    }
  }

  private sendOnce(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
  ): Promise<http.IncomingMessage> {
    const record: RecordedRequest = {
      method,
      url: url.startsWith(this.urlBase) ? url.slice(this.urlBase.length) : url,
      headers: { ...headers },
      bodyLength: body?.length ?? 0,
      status: 0,
    };
    this.requests.push(record);
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method, headers }, (res) => {
        record.status = res.statusCode ?? 0;
        resolve(res);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  private static async text(res: http.IncomingMessage): Promise<string> {
    const source: Readable = res.headers['content-encoding'] === 'gzip' ? res.pipe(zlib.createGunzip()) : res;
    const chunks: Buffer[] = [];
    for await (const chunk of source) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async sendRestRequest(method: string, route: string, options: RequestOptions = {}): Promise<Json> {
    const url = this.urlFor(route, options.parameters);
    const res = await this.send(method.toUpperCase(), url, options);
    if (res.statusCode === 200 || res.statusCode === 201) {
      if (options.jsonResp === false) return res;
      return JSON.parse(await GirderClient.text(res));
    }
    throw new HttpError(res.statusCode ?? 0, await GirderClient.text(res), url, method);
  }

  get(route: string, parameters?: Params, jsonResp = true): Promise<Json> {
    return this.sendRestRequest('GET', route, { parameters, jsonResp });
  }

  post(route: string, parameters?: Params, data?: Buffer): Promise<Json> {
    return this.sendRestRequest('POST', route, { parameters, data });
  }

  put(route: string, parameters?: Params, data?: Buffer): Promise<Json> {
    return this.sendRestRequest('PUT', route, { parameters, data });
  }

  delete(route: string, parameters?: Params): Promise<Json> {
    return this.sendRestRequest('DELETE', route, { parameters });
  }

  // ---- authentication -------------------------------------------------------------------------------------------

  async authenticate(credentials: { username: string; password: string } | { apiKey: string }): Promise<Json> {
    let resp: Json;
    if ('apiKey' in credentials) {
      resp = await this.post('api_key/token', { key: credentials.apiKey });
    } else {
      try {
        resp = await this.sendRestRequest('get', 'user/authentication', {
          auth: [credentials.username, credentials.password],
          headers: { 'Girder-Token': null },
        });
      } catch (error) {
        if (error instanceof HttpError && (error.status === 401 || error.status === 403))
          throw new AuthenticationError();
        throw error;
      }
    }
    this.setToken(resp.authToken.token);
    return resp.user;
  }

  setToken(token: string): void {
    this.token = token;
  }

  async getServerVersion(useCached = true): Promise<string[]> {
    if (this.serverVersion.length === 0 || !useCached) {
      const response = await this.get('system/version');
      const release: string = 'release' in response ? response.release : response.apiVersion;
      // Python's release.split('.', 2): at most three parts, the last one keeps its dots.
      const [major, minor, ...rest] = release.split('.') as [string, string | undefined, ...string[]];
      this.serverVersion = [major, ...(minor !== undefined ? [minor] : []), ...(rest.length ? [rest.join('.')] : [])];
    }
    return this.serverVersion;
  }

  // ---- resources ------------------------------------------------------------------------------------------------

  resourceLookup(resourcePath: string): Promise<Json> {
    return this.get('resource/lookup', { path: resourcePath });
  }

  async *listResource(route: string, params: Params = {}, limit?: number, offset?: number): AsyncGenerator<Json> {
    const query: Params = { ...params, offset: offset || 0, limit: limit || DEFAULT_PAGE_LIMIT };
    for (;;) {
      const records: Json[] = await this.get(route, query);
      yield* records;
      const n = records.length;
      if (limit || n < (query.limit as number)) break;
      query.offset = (query.offset as number) + n;
    }
  }

  getResource(route: string, id?: string, property?: string): Promise<Json> {
    let full = route;
    if (id !== undefined) full += `/${id}`;
    if (property !== undefined) full += `/${property}`;
    return this.get(full);
  }

  getFile(fileId: string): Promise<Json> {
    return this.getResource('file', fileId);
  }

  listFile(itemId: string, limit?: number, offset?: number): AsyncGenerator<Json> {
    return this.listResource(`item/${itemId}/files`, { id: itemId }, limit, offset);
  }

  createItem(
    parentFolderId: string,
    name: string,
    description = '',
    reuseExisting = false,
    metadata: unknown = null,
  ): Promise<Json> {
    const meta = metadata !== null && typeof metadata !== 'string' ? JSON.stringify(metadata) : metadata;
    return this.post('item', { folderId: parentFolderId, name, description, reuseExisting, metadata: meta });
  }

  listItem(folderId: string, text?: string, name?: string, limit?: number, offset?: number): AsyncGenerator<Json> {
    const params: Params = { folderId };
    if (text) params.text = text;
    if (name) params.name = name;
    return this.listResource('item', params, limit, offset);
  }

  createFolder(
    parentId: string,
    name: string,
    description = '',
    parentType = 'folder',
    isPublic: boolean | null = null,
    reuseExisting = false,
    metadata: unknown = null,
  ): Promise<Json> {
    const meta = metadata !== null && typeof metadata !== 'string' ? JSON.stringify(metadata) : metadata;
    const params: Params = { parentId, parentType, name, description, reuseExisting, metadata: meta };
    if (isPublic !== null) params.public = isPublic;
    return this.post('folder', params);
  }

  listFolder(
    parentId: string,
    parentFolderType = 'folder',
    name?: string,
    limit?: number,
    offset?: number,
  ): AsyncGenerator<Json> {
    const params: Params = { parentId, parentType: parentFolderType };
    if (name) params.name = name;
    return this.listResource('folder', params, limit, offset);
  }

  // ---- uploads --------------------------------------------------------------------------------------------------

  async isFileCurrent(itemId: string, filename: string, filepath: string): Promise<[string | null, boolean]> {
    for await (const itemFile of this.listFile(itemId)) {
      if (filename === itemFile.name) return [itemFile._id, fs.statSync(filepath).size === itemFile.size];
    }
    return [null, false];
  }

  async uploadFileToItem(
    itemId: string,
    filepath: string,
    reference?: string,
    mimeType?: string | null,
    filename?: string,
  ): Promise<Json> {
    const name = path.basename(filename ?? filepath);
    const absolute = path.resolve(filepath);
    const filesize = fs.statSync(absolute).size;
    const [fileId, current] = await this.isFileCurrent(itemId, name, absolute);
    if (fileId !== null && current) return undefined; // "File already exists in parent Item"
    let obj: Json;
    if (fileId !== null && !current) {
      const params: Params = { size: filesize };
      if (reference) params.reference = reference;
      obj = await this.put(`file/${fileId}/contents`, params);
      if (!('_id' in obj))
        throw new Error(
          `After creating an upload token for replacing file contents, expected an object with an id. Got instead: ${JSON.stringify(obj)}`,
        );
    } else {
      const params: Params = {
        parentType: 'item',
        parentId: itemId,
        name,
        size: filesize,
        mimeType: mimeType ?? guessType(absolute),
      };
      if (reference) params.reference = reference;
      obj = await this.post('file', params);
      if (!('_id' in obj))
        throw new Error(
          `After creating an upload token for a new file, expected an object with an id. Got instead: ${JSON.stringify(obj)}`,
        );
    }
    const file = await openFile(absolute);
    try {
      return await this._uploadContents(obj, file, filesize);
    } finally {
      await file.close();
    }
  }

  async uploadStreamToFolder(
    folderId: string,
    stream: ByteStream,
    filename: string,
    size: number,
    reference?: string,
    mimeType?: string | null,
  ): Promise<Json> {
    const params: Params = { parentType: 'folder', parentId: folderId, name: filename, size, mimeType };
    if (reference) params.reference = reference;
    if (size <= this.MAX_CHUNK_SIZE && listGreaterOrEqual(await this.getServerVersion(), ['2', '3'])) {
      const chunk = await stream.read(size);
      return this.post('file', params, chunk);
    }
    const obj = await this.post('file', params);
    if (!('_id' in obj))
      throw new Error(
        `After creating an upload token for a new file, expected an object with an id. Got instead: ${JSON.stringify(obj)}`,
      );
    return this._uploadContents(obj, stream, size);
  }

  async uploadFileToFolder(
    folderId: string,
    filepath: string,
    reference?: string,
    mimeType?: string | null,
    filename?: string,
  ): Promise<Json> {
    const name = path.basename(filename ?? filepath);
    const absolute = path.resolve(filepath);
    const filesize = fs.statSync(absolute).size;
    const file = await openFile(absolute);
    try {
      return await this.uploadStreamToFolder(
        folderId,
        file,
        name,
        filesize,
        reference,
        mimeType ?? guessType(absolute),
      );
    } finally {
      await file.close();
    }
  }

  async _uploadContents(uploadObj: Json, stream: ByteStream, size: number): Promise<Json> {
    let offset = 0;
    const uploadId: string = uploadObj._id;
    let obj = uploadObj;
    for (;;) {
      const chunk = await stream.read(Math.min(this.MAX_CHUNK_SIZE, size - offset));
      if (chunk.length === 0) break;
      obj = await this.post(`file/chunk?offset=${offset}&uploadId=${uploadId}`, undefined, chunk);
      if (!('_id' in obj))
        throw new Error(
          `After uploading a file chunk, did not receive object with _id. Got instead: ${JSON.stringify(obj)}`,
        );
      offset += chunk.length;
    }
    if (offset !== size) {
      await this.delete(`file/upload/${uploadId}`);
      throw new IncorrectUploadLengthError(`Expected upload to be ${size} bytes, but received ${offset}.`, obj);
    }
    return obj;
  }

  async uploadFile(
    parentId: string,
    stream: ByteStream,
    name: string,
    size: number,
    parentType = 'item',
    reference?: string,
    mimeType?: string | null,
  ): Promise<Json> {
    const params: Params = { parentType, parentId, name, size, mimeType: mimeType || guessType(name) };
    if (reference !== undefined) params.reference = reference;
    const obj = await this.post('file', params);
    if (!('_id' in obj))
      throw new Error(
        `After creating an upload token for a new file, expected an object with an id. Got instead: ${JSON.stringify(obj)}`,
      );
    return this._uploadContents(obj, stream, size);
  }

  async uploadFileContents(fileId: string, stream: ByteStream, size: number, reference?: string): Promise<Json> {
    const params: Params = { size };
    if (reference) params.reference = reference;
    const obj = await this.put(`file/${fileId}/contents`, params);
    if (!('_id' in obj))
      throw new Error(
        `After creating an upload token for replacing file contents, expected an object with an id. Got instead: ${JSON.stringify(obj)}`,
      );
    return this._uploadContents(obj, stream, size);
  }

  async loadOrCreateFolder(
    folderName: string,
    parentId: string,
    parentType: string,
    metadata: unknown = null,
  ): Promise<Json> {
    const first = await this.listFolder(parentId, parentType, folderName).next();
    if (!first.done) return first.value;
    return this.createFolder(parentId, folderName, '', parentType, null, false, metadata);
  }

  async loadOrCreateItem(
    name: string,
    parentFolderId: string,
    reuseExisting = true,
    metadata: unknown = null,
  ): Promise<Json> {
    let item: Json = null;
    if (reuseExisting) {
      const first = await this.listItem(parentFolderId, undefined, name).next();
      if (!first.done) item = first.value;
    }
    if (item === null) item = await this.createItem(parentFolderId, name, '', false, metadata);
    return item;
  }

  async _uploadAsItem(
    localFile: string,
    parentFolderId: string,
    filePath: string,
    reuseExisting = false,
    reference?: string,
  ): Promise<void> {
    if (reuseExisting || fs.statSync(filePath).size === 0) {
      const currentItem = await this.loadOrCreateItem(path.basename(localFile), parentFolderId, reuseExisting);
      await this.uploadFileToItem(currentItem._id, filePath, reference, undefined, localFile);
    } else {
      await this.uploadFileToFolder(parentFolderId, filePath, reference, undefined, localFile);
    }
  }

  async _uploadFolderRecursive(
    localFolder: string,
    parentId: string,
    parentType: string,
    reuseExisting = false,
    reference?: string,
  ): Promise<void> {
    const folder = await this.loadOrCreateFolder(path.basename(localFolder), parentId, parentType);
    for (const entry of fs.readdirSync(localFolder).sort()) {
      const fullEntry = path.join(localFolder, entry);
      const stat = fs.lstatSync(fullEntry);
      if (stat.isSymbolicLink()) continue; // os.walk skips symlinks by default
      if (stat.isDirectory())
        await this._uploadFolderRecursive(fullEntry, folder._id, 'folder', reuseExisting, reference);
      else await this._uploadAsItem(entry, folder._id, fullEntry, reuseExisting, reference);
    }
  }

  /** `upload(filePattern, parentId, parentType)`, for patterns that name existing paths (no wildcards). */
  async upload(
    filePaths: string | string[],
    parentId: string,
    parentType = 'folder',
    reuseExisting = false,
    reference?: string,
  ): Promise<void> {
    const resolvedParent = await this._checkResourcePath(parentId);
    for (const pattern of Array.isArray(filePaths) ? filePaths : [filePaths]) {
      if (!fs.existsSync(pattern)) continue;
      const currentFile = path.normalize(pattern);
      if (fs.statSync(currentFile).isFile()) {
        if (parentType !== 'folder')
          throw new Error(`Attempting to upload an item under a ${parentType}. Items can only be added to folders.`);
        await this._uploadAsItem(path.basename(currentFile), resolvedParent!, currentFile, reuseExisting, reference);
      } else {
        await this._uploadFolderRecursive(currentFile, resolvedParent!, parentType, reuseExisting, reference);
      }
    }
  }

  async _checkResourcePath(objId: string): Promise<string | null> {
    if (objId.startsWith('/')) {
      try {
        return (await this.resourceLookup(objId))._id;
      } catch (error) {
        if (error instanceof HttpError) return null;
        throw error;
      }
    }
    return objId;
  }

  // ---- downloads ------------------------------------------------------------------------------------------------

  transformFilename(name: string): string {
    let safe = name === '.' || name === '..' ? `_${name}` : name;
    safe = safe.split(path.sep).join('_');
    return safe.replace(/^[/\\]+/, '_');
  }

  /** `created` only keys girder_client's disk cache, which is left out. */
  async downloadFile(fileId: string, filePath: string, _created?: string): Promise<void> {
    const fileObj = await this.getFile(fileId);
    const res: http.IncomingMessage = await this.sendRestRequest('get', `file/${fileId}/download`, { jsonResp: false });
    const tmp = path.join(os.tmpdir(), `girder-client-${crypto.randomUUID()}`);
    await pipeline(res, fs.createWriteStream(tmp, { highWaterMark: REQ_BUFFER_SIZE }));
    const size = fs.statSync(tmp).size;
    if (size !== fileObj.size) {
      fs.rmSync(tmp);
      throw new IncompleteResponseError(`File ${fileId} download`, fileObj.size, size);
    }
    safeMakedirs(path.dirname(filePath));
    try {
      fs.renameSync(tmp, filePath);
    } catch {
      fs.copyFileSync(tmp, filePath);
      fs.rmSync(tmp);
    }
  }

  async downloadItem(itemId: string, dest: string, name?: string): Promise<void> {
    let itemName = name;
    itemName ??= (await this.get(`item/${itemId}`)).name as string;
    let target = dest;
    let offset = 0;
    let first = true;
    for (;;) {
      const files: Json[] = await this.get(`item/${itemId}/files`, { limit: DEFAULT_PAGE_LIMIT, offset });
      if (first) {
        if (files.length === 1 && files[0].name === itemName) {
          await this.downloadFile(files[0]._id, path.join(target, this.transformFilename(itemName)), files[0].created);
          break;
        }
        target = path.join(target, this.transformFilename(itemName));
        safeMakedirs(target);
      }
      for (const file of files)
        await this.downloadFile(file._id, path.join(target, this.transformFilename(file.name)), file.created);
      first = false;
      offset += files.length;
      if (files.length < DEFAULT_PAGE_LIMIT) break;
    }
  }

  async downloadFolderRecursive(folderIdOrPath: string, dest: string): Promise<void> {
    const folderId = await this._checkResourcePath(folderIdOrPath);
    let offset = 0;
    for (;;) {
      const folders: Json[] = await this.get('folder', {
        limit: DEFAULT_PAGE_LIMIT,
        offset,
        parentType: 'folder',
        parentId: folderId,
      });
      for (const folder of folders) {
        const local = path.join(dest, this.transformFilename(folder.name));
        safeMakedirs(local);
        await this.downloadFolderRecursive(folder._id, local);
      }
      offset += folders.length;
      if (folders.length < DEFAULT_PAGE_LIMIT) break;
    }
    offset = 0;
    for (;;) {
      const items: Json[] = await this.get('item', { folderId, limit: DEFAULT_PAGE_LIMIT, offset });
      for (const item of items) await this.downloadItem(item._id, dest, item.name);
      offset += items.length;
      if (items.length < DEFAULT_PAGE_LIMIT) break;
    }
  }
}
