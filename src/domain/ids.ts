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
