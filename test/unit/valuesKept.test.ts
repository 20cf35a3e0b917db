import fc from 'fast-check';
import { RestError, ValidationError } from '../../src/domain/errors';
import { parseUrlEncoded } from '../../src/http/urlEncoded';
import { checkExactNumbers, inexactNumber } from '../../src/domain/exactNumbers';
import { parseIsoTime } from '../../src/domain/time';

/** Rule 2 of docs/http-conventions.md, at the functions that hold it: nothing accepted is altered on the way in. */
const failure = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a refusal');
};

describe('urlencoded text: URLSearchParams, except that bytes that are not UTF-8 are refused', () => {
  const asSearchParams = (text: string) => [...new URLSearchParams(text)];
  // Text built from the characters that matter to the syntax, escapes (valid and malformed) and any unicode.
  const piece = fc.oneof(
    fc.constantFrom('&', '=', '+', '%', '%2', '%zz', '%41', '%C3%A9', '%E2%82%AC', '%F0%9F%98%80', '%26', '%3D', '%2B'),
    fc.string({ unit: 'grapheme', maxLength: 6 }),
  );
  // Node's URLSearchParams mangles non-ASCII text that also holds a `%` not followed by two hex digits (`%zz\u00a0`
  // gives `%zz\ufffd`; the URL standard keeps both): such text is left to the explicit cases below.
  const text = fc
    .array(piece, { maxLength: 12 })
    .map((pieces) => pieces.join(''))
    .filter((t) => !/%(?![0-9A-Fa-f]{2})/.test(t) || /^[\x00-\x7f]*$/.test(t));

  it('agrees with URLSearchParams wherever the bytes are UTF-8', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(parseUrlEncoded(Buffer.from(t))).toEqual(asSearchParams(t));
      }),
      { numRuns: 500, seed: 28 },
    );
  });

  it('refuses a value whose escapes or raw bytes are not UTF-8, naming the parameter', () => {
    for (const body of [Buffer.from('a=1&name=%FF'), Buffer.from('name=%C3%28'), Buffer.from('name=%ED%A0%80')]) {
      const error = failure(() => parseUrlEncoded(body));
      expect(error).toBeInstanceOf(RestError);
      expect(error.message).toBe('Parameter name is not valid UTF-8.');
    }
    const raw = Buffer.concat([Buffer.from('name=caf'), Buffer.from([0xe9])]);
    expect(failure(() => parseUrlEncoded(raw)).message).toBe('Parameter name is not valid UTF-8.');
    expect(failure(() => parseUrlEncoded(Buffer.from('na%FFme=1'))).message).toBe(
      'A parameter name is not valid UTF-8: 6e61ff6d65.',
    );
  });

  it('keeps what is UTF-8 exactly, U+FFFD and a byte-order mark included', () => {
    expect(parseUrlEncoded(Buffer.from('name=%EF%BF%BD&b=%EF%BB%BFx&c=%\u00a0'))).toEqual([
      ['name', '\uFFFD'],
      ['b', '\uFEFFx'],
      ['c', '%\u00a0'],
    ]);
    expect(parseUrlEncoded(Buffer.from('%zz%41\u00a0=%2'))).toEqual([['%zzA\u00a0', '%2']]);
  });
});

describe('JSON numbers: an integer literal must be safe, every number finite', () => {
  it.each(['9007199254740993', '-9007199254740992', '1e400', '-1E+309', '[1, {"a": 123456789012345678901234567890}]'])(
    '%s is refused',
    (text) => {
      const error = failure(() => checkExactNumbers('metadata', text));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('metadata');
      expect(error.message).toMatch(/^metadata holds the number -?\d[\dEe+.]*, which cannot be stored exactly/);
    },
  );

  it.each([
    '9007199254740991',
    '-9007199254740991',
    '1e308',
    '0.1',
    '1.7976931348623157e308',
    '5e-324',
    '12345678901234567.5',
    '{"9007199254740993": "1e400 \\" 99999999999999999999"}',
  ])('%s is kept', (text) => {
    expect(inexactNumber(text)).toBeUndefined();
  });

  it('names a long literal shortened', () => {
    expect(failure(() => checkExactNumbers('v', '9'.repeat(100))).message).toBe(
      `v holds the number ${'9'.repeat(40)}…, which cannot be stored exactly: integers must be within ±9007199254740991 and numbers finite.`,
    );
  });

  it('agrees with BigInt on every generated integer', () => {
    const limit = 2n ** 53n - 1n;
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), (n) => {
        const exact = n >= -limit && n <= limit;
        expect(inexactNumber(`{"k": [${n}]}`) === undefined).toBe(exact);
      }),
      { numRuns: 300, seed: 28 },
    );
  });
});

describe('dates exist', () => {
  it.each(['2027-02-30', '2027-02-29', '2100-02-29', '2027-04-31', '2027-13-01', '2027-00-10', '2027-01-00'])(
    '%s is no date',
    (text) => expect(parseIsoTime(text)).toBeNull(),
  );
  it.each(['2027-01-01T24:00:00Z', '2027-01-01T23:60:00Z', '2027-01-01T23:59:60Z', '2027-01-01T12:00:00+24:00'])(
    '%s is no time',
    (text) => expect(parseIsoTime(text)).toBeNull(),
  );
  it('reads days and times that exist as before', () => {
    expect(parseIsoTime('2028-02-29')).toBe(Date.UTC(2028, 1, 29));
    expect(parseIsoTime('2000-02-29T23:59:59.5+02:00')).toBe(Date.UTC(2000, 1, 29, 21, 59, 59, 500));
    expect(parseIsoTime('2027-12-31T00:00:00-23:59')).toBe(Date.UTC(2027, 11, 31, 23, 59));
  });
});
