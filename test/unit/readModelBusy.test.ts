import { errorResponse } from '../../src/http/errorMapping';
import { ReadModelBusyError } from '../../src/ports/readModelBusy';

/**
 * A reader held by an event applied in steps (src/infra/readmodel/mongodb/stepwiseApply.ts) for its whole wait: 503
 * with `Retry-After`, as a write held by a lagging projector; test/contract/mongoSubtreeSteps.test.ts shows when
 * readers get it.
 */
describe('a read held by a large change applying', () => {
  it('is 503 with Retry-After and says why', () => {
    expect(errorResponse(new ReadModelBusyError(10_000), { loggedIn: true, production: true, requestId: 'r' })).toEqual(
      {
        status: 503,
        retryAfterSeconds: 5,
        body: {
          message:
            'The request was not answered: the read models were applying a large change (a copy, move or delete of a large subtree) for over 10000 ms. Retry shortly.',
          type: 'rest',
        },
      },
    );
  });
});
