/**
 * Worker thread entry of the blob stores' SHA-512 (hashingTap.ts): one running hash per stream being stored, fed
 * with the batches of bytes it receives in order, answered with its digest at the end.
 */
import crypto from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import type { Sha512Reply, Sha512Request } from './hashingTap';

if (!parentPort) throw new Error('the hashing thread runs as a worker thread (hashingTap.ts starts it).');
const port = parentPort;
const running = new Map<number, crypto.Hash>();

port.on('message', (request: Sha512Request) => {
  let hash = running.get(request.stream);
  if (!hash) {
    hash = crypto.createHash('sha512');
    running.set(request.stream, hash);
  }
  if (request.bytes) hash.update(request.bytes);
  let reply: Sha512Reply = { id: request.id };
  if (request.end !== undefined) {
    running.delete(request.stream);
    if (request.end === 'digest') reply = { id: request.id, digest: hash.digest('hex') };
  }
  // The batch's buffer goes back to be filled again (fresh memory costs a page fault per 4 KiB).
  const returned = request.bytes?.buffer as ArrayBuffer | undefined;
  port.postMessage(returned ? { ...reply, returned } : reply, returned ? [returned] : []);
});
