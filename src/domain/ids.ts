import crypto from 'node:crypto';

/**
 * 24-hex-digit ObjectId-style identifiers (valid MongoDB ObjectIds): 4 bytes of seconds, 5 random bytes fixed per
 * process, 3 bytes of counter, exactly as the Mongo drivers generate them.
 */
const processUnique = crypto.randomBytes(5);
let counter = crypto.randomBytes(3).readUIntBE(0, 3);

export function newId(now = Date.now()): string {
  const buf = Buffer.alloc(12);
  buf.writeUInt32BE(Math.floor(now / 1000) >>> 0, 0);
  processUnique.copy(buf, 4);
  counter = (counter + 1) % 0xffffff;
  buf.writeUIntBE(counter, 9, 3);
  return buf.toString('hex');
}

export const isObjectId = (value: string): boolean => /^[0-9a-f]{24}$/i.test(value);

/**
 * The id of the copy of `sourceId` made by operation `opId` (the SQLite adapter registers it as the SQL function
 * `derive_id`; the MongoDB adapter and point-in-time reads call it directly): like an ObjectId, it starts with the
 * 4-byte timestamp (the operation's, taken from `opId`), followed by 8 bytes of SHA-256 of
 * `<opId>:<sourceId>`. Sharing the operation's prefix keeps a copy's rows together in every id-keyed index, which is
 * what makes inserting 100,000 of them in one transaction fast.
 */
export function deriveId(opId: string, sourceId: string): string {
  // (The one-shot `crypto.hash`: the same digest at under half the cost; a 100k-folder copy derives ~300k ids.)
  return opId.slice(0, 8) + crypto.hash('sha256', `${opId}:${sourceId}`, 'hex').slice(0, 16);
}
