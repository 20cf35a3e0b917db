import { ValidationError } from './errors';

/**
 * Numbers that JSON text can write but a read model cannot hold: JSON.parse reads `9007199254740993` as
 * 9007199254740992 and `1e400` as Infinity (stored as null), and the service would store a value other than the one
 * sent. The parsed value no longer shows it, so the text's own number tokens are read: an integer literal must be a
 * safe integer (|n| ≤ 2^53 − 1) and every number must be finite. Fractions are IEEE doubles in JSON's own sense and
 * are taken as JSON.parse reads them.
 */
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** Only a literal of 16 digits or more, or one with an exponent, can be past either bound: most texts skip the scan. */
const MAYBE_INEXACT = /\d{16}|\d[eE]/;
const SHOWN = 40;

/** The first number token of valid JSON text that cannot be carried exactly, or undefined. */
export function inexactNumber(text: string): string | undefined {
  if (!MAYBE_INEXACT.test(text)) return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string, escapes included (the text is valid JSON: it has a closing quote).
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
      continue;
    }
    if (c !== 0x2d /* - */ && (c < 0x30 || c > 0x39)) continue;
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (!match) continue;
    const literal = match[0];
    const value = Number(literal);
    const integer = /^-?\d+$/.test(literal);
    if (!Number.isFinite(value) || (integer && !Number.isSafeInteger(value))) return literal;
    i += literal.length - 1;
  }
  return undefined;
}

/** Refuses valid JSON text holding a number no read model stores exactly: 400 validation naming the field. */
export function checkExactNumbers(field: string, text: string): void {
  const literal = inexactNumber(text);
  if (literal === undefined) return;
  const shown = literal.length > SHOWN ? `${literal.slice(0, SHOWN)}…` : literal;
  throw new ValidationError(
    `${field} holds the number ${shown}, which cannot be stored exactly: integers must be within ±9007199254740991 and numbers finite.`,
    field,
  );
}
