import { errorResponse } from '../../src/http/errorMapping';
import { deserializeError, serializeError } from '../../src/infra/threadErrors';

/**
 * The one classifier of storage faults (src/ports/storageFault.ts) as the HTTP layer answers them, for each code the
 * stores raise; test/embedded/storageFaults.test.ts makes the full disk and the read-only store real.
 */
const answer = (error: unknown) => errorResponse(error, { loggedIn: true, production: true, requestId: 'r' });
const withCode = (code: string, message = `${code}: failed`) => Object.assign(new Error(message), { code });

describe('storage faults are named, whichever store raised them', () => {
  it.each(['ENOSPC', 'EDQUOT', 'SQLITE_FULL'])('%s is 507, the disk is full', (code) => {
    expect(answer(withCode(code))).toEqual({
      status: 507,
      body: { message: `The change was not made: the disk of the data store is full (${code}).`, type: 'rest' },
    });
  });

  it.each(['EROFS', 'EACCES', 'EPERM', 'SQLITE_READONLY', 'SQLITE_READONLY_DBMOVED'])(
    '%s is 503 with Retry-After, the store cannot be written',
    (code) => {
      expect(answer(withCode(code))).toEqual({
        status: 503,
        retryAfterSeconds: 30,
        body: {
          message: `The change was not made: the data store cannot be written (${code}). Retry later.`,
          type: 'rest',
        },
      });
    },
  );

  it('keeps the code across the append worker thread and through a cause', () => {
    const fromWorker = deserializeError(serializeError(withCode('SQLITE_FULL', 'database or disk is full')));
    expect(answer(fromWorker).status).toBe(507);
    expect(answer(new Error('upload failed', { cause: withCode('EROFS') })).status).toBe(503);
  });

  it('leaves other errors to the 500 they are', () => {
    expect(answer(withCode('SQLITE_CORRUPT')).status).toBe(500);
    expect(answer(withCode('ENOENT')).status).toBe(500);
  });
});
