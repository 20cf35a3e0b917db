import crypto from 'node:crypto';

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP), as Girder uses them through pyotp: HMAC-SHA1,
 * 6 digits, 30-second steps, a base32 key of 160 random bits.
 */
const TOTP_DIGITS = 6;
const TOTP_STEP_SECONDS = 30;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A new key: 20 random bytes as 32 base32 characters (pyotp's `random_base32`). */
export function newTotpKey(): string {
  const bytes = crypto.randomBytes(20);
  let bits = '';
  for (const byte of bytes) bits += byte.toString(2).padStart(8, '0');
  let key = '';
  for (let i = 0; i < bits.length; i += 5) key += BASE32[parseInt(bits.slice(i, i + 5), 2)];
  return key;
}

function base32Bytes(key: string): Buffer {
  let bits = '';
  for (const char of key.replace(/=+$/, '').toUpperCase()) {
    const value = BASE32.indexOf(char);
    if (value < 0) throw new Error('A TOTP key must be base32.');
    bits += value.toString(2).padStart(5, '0');
  }
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/** RFC 4226 HOTP: the code of `counter` (dynamic truncation of HMAC-SHA1, zero-padded to 6 digits). */
function hotp(key: string, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = crypto.createHmac('sha1', base32Bytes(key)).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const code = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** TOTP_DIGITS;
  return String(code).padStart(TOTP_DIGITS, '0');
}

/** The time step of an instant (RFC 6238 `T`). */
export const totpCounter = (nowMs: number): number => Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);

/**
 * Whether `code` is the key's code for the step of `nowMs` or one step either side (pyotp's `valid_window=1`, which
 * tolerates clocks a little apart), compared in constant time.
 */
export function totpMatches(key: string, code: string, nowMs: number): boolean {
  const now = totpCounter(nowMs);
  let matched = false;
  for (const counter of [now - 1, now, now + 1]) {
    const expected = Buffer.from(hotp(key, counter));
    const given = Buffer.from(code);
    if (given.length === expected.length && crypto.timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}

/**
 * The key as an `otpauth://` URI for authenticator apps (Google's Key Uri Format, as pyotp's `provisioning_uri`):
 * label `issuer:login`, then the secret and the issuer.
 */
export function totpUri(key: string, login: string, issuer: string): string {
  const quote = (text: string) =>
    encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `otpauth://totp/${quote(issuer)}:${quote(login)}?secret=${key}&issuer=${quote(issuer)}`;
}
