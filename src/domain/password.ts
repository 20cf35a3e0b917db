import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;
const PARAMS = { N: 16384, r: 8, p: 1 };
const KEY_LENGTH = 64;

/** The key derivation every password check runs, as an object so that a test can count its calls. */
export const passwordKdf = { derive: scrypt };

/** `scrypt$N$r$p$salt$hash` (base64): the parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await passwordKdf.derive(password, salt, KEY_LENGTH, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Stands in for a hash when there is none to check: the parameters of a new hash, a salt no user has. */
const DUMMY = { salt: crypto.randomBytes(16), keyLength: KEY_LENGTH, params: PARAMS };

/**
 * Whether `password` matches the stored hash. With no hash (an unknown login) or one this code cannot read, the
 * password is still derived, against a dummy with the parameters of a new hash, and the answer is false: a check
 * costs the same whether the login exists or not, so its timing does not tell which logins exist.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? '').split('$');
  if (scheme !== 'scrypt' || !salt || !hash) {
    await passwordKdf.derive(password, DUMMY.salt, DUMMY.keyLength, DUMMY.params);
    return false;
  }
  const expected = Buffer.from(hash, 'base64');
  const key = await passwordKdf.derive(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return crypto.timingSafeEqual(key, expected);
}

const TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 64 random characters from [A-Za-z0-9] (Girder's genToken), without modulo bias. */
export function generateToken(length = 64): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += TOKEN_ALPHABET[byte % 62];
    }
  }
  return out;
}
