import { FORGET_AFTER_MS, FailureThrottle } from '../../src/http/failureThrottle';

/** The throttle behind password checks (src/http/passwordCheck.ts), on a clock the test moves. */
describe('FailureThrottle', () => {
  let now = 0;
  const clock = () => now;
  const limits = { freeFailures: 2, delayMs: 1000, maxDelayMs: 8000 };

  beforeEach(() => {
    now = 1_000_000;
  });

  it('lets the free failures through, then waits the delay, doubled per further failure, at most the longest', () => {
    const throttle = new FailureThrottle(limits, clock);
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      throttle.failed(['k']);
      waits.push(throttle.waitMs(['k']));
      now += throttle.waitMs(['k']);
    }
    expect(waits).toEqual([0, 1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('waits for the longest-locked of the keys asked about; a success clears only its own key', () => {
    const throttle = new FailureThrottle(limits, clock);
    throttle.failed(['account', 'address']);
    throttle.failed(['account', 'address']);
    throttle.failed(['address']);
    expect(throttle.waitMs(['account', 'address'])).toBe(2000);
    throttle.succeeded('account');
    expect(throttle.waitMs(['account'])).toBe(0);
    expect(throttle.waitMs(['address'])).toBe(2000);
  });

  it('forgets a key a day after its last failure', () => {
    const throttle = new FailureThrottle(limits, clock);
    throttle.failed(['k']);
    throttle.failed(['k']);
    now += FORGET_AFTER_MS + 1;
    throttle.failed(['k']);
    expect(throttle.waitMs(['k'])).toBe(0);
  });

  it('holds at most maxEntries keys, dropping the one that failed longest ago', () => {
    const throttle = new FailureThrottle({ ...limits, maxEntries: 3 }, clock);
    throttle.failed(['a']);
    throttle.failed(['a']);
    for (const key of ['b', 'c']) throttle.failed([key]);
    // `a` failed again last: `b` is now the oldest.
    throttle.failed(['a']);
    throttle.failed(['d']);
    expect(throttle.size).toBe(3);
    expect(throttle.waitMs(['a'])).toBe(2000);
    throttle.failed(['b']);
    throttle.failed(['b']);
    expect(throttle.waitMs(['b'])).toBe(1000);
    expect(throttle.size).toBe(3);
  });
});
