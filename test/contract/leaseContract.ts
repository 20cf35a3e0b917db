import { FencedOffError, type ReadModel } from '../../src/ports/readModel';
import { user } from './readModelContract';

/**
 * The lease contract of the ReadModel port (`readModel.leases`), run against every adapter. `make` opens the same
 * storage twice, as two processes sharing one read model would (two SQLite connections to one file; two MongoDB
 * read models on one database).
 */
export interface LeaseFixture {
  first: ReadModel;
  second: ReadModel;
  dispose(): Promise<void>;
}

const LEASE = 'projector:contract';
const LONG = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function leaseContract(name: string, make: () => Promise<LeaseFixture>): void {
  describe(`Lease contract: ${name}`, () => {
    let fixture: LeaseFixture;
    let a: ReadModel['leases'];
    let b: ReadModel['leases'];
    beforeEach(async () => {
      fixture = await make();
      a = fixture.first.leases;
      b = fixture.second.leases;
    });
    afterEach(() => fixture.dispose());

    it('lets only one of two holders acquire a free lease', async () => {
      expect(await a.get(LEASE)).toBeNull();
      const [first, second] = await Promise.all([
        a.acquire(LEASE, 'holder-a', LONG),
        b.acquire(LEASE, 'holder-b', LONG),
      ]);
      expect([first, second].filter(Boolean)).toHaveLength(1);
      const winner = first ? 'holder-a' : 'holder-b';
      expect((await a.get(LEASE))?.holder).toBe(winner);
      expect((await b.get(LEASE))?.holder).toBe(winner);
      // Asking again changes nothing for the loser; the winner may ask again (it keeps the lease).
      expect(await b.acquire(LEASE, first ? 'holder-b' : 'holder-a', LONG)).toBe(false);
      expect(await a.acquire(LEASE, winner, LONG)).toBe(true);
      // Other lease names are independent.
      expect(await b.acquire('other', 'holder-b', LONG)).toBe(true);
    });

    it('hands an expired lease over, and the old holder can neither renew nor retake it', async () => {
      expect(await a.acquire(LEASE, 'holder-a', 150)).toBe(true);
      expect(await b.acquire(LEASE, 'holder-b', LONG)).toBe(false);
      await sleep(250);
      expect(await b.acquire(LEASE, 'holder-b', LONG)).toBe(true);
      expect(await a.renew(LEASE, 'holder-a', LONG)).toBe(false);
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(false);
      const lease = await a.get(LEASE);
      expect(lease?.holder).toBe('holder-b');
      expect(lease!.expiresAt.getTime()).toBeGreaterThan(Date.now() + LONG / 2);
    });

    it('keeps a renewed lease past its first expiry', async () => {
      expect(await a.acquire(LEASE, 'holder-a', 200)).toBe(true);
      for (let i = 0; i < 4; i++) {
        await sleep(80);
        expect(await a.renew(LEASE, 'holder-a', 200)).toBe(true);
        expect(await b.acquire(LEASE, 'holder-b', LONG)).toBe(false);
      }
      expect((await b.get(LEASE))?.holder).toBe('holder-a');
      // Only the holder renews.
      expect(await b.renew(LEASE, 'holder-b', LONG)).toBe(false);
      expect((await b.get(LEASE))?.holder).toBe('holder-a');
    });

    it('frees a released lease at once; only the holder releases', async () => {
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(true);
      await b.release(LEASE, 'holder-b');
      expect(await b.acquire(LEASE, 'holder-b', LONG)).toBe(false);
      await a.release(LEASE, 'holder-a');
      expect(await a.get(LEASE)).toBeNull();
      expect(await a.renew(LEASE, 'holder-a', LONG)).toBe(false);
      expect(await b.acquire(LEASE, 'holder-b', LONG)).toBe(true);
      expect((await a.get(LEASE))?.holder).toBe('holder-b');
    });

    it('takes an unexpired lease over only from the holder named as gone', async () => {
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(true);
      expect(await b.acquire(LEASE, 'holder-b', LONG, 'someone-else')).toBe(false);
      expect(await b.acquire(LEASE, 'holder-b', LONG, 'holder-a')).toBe(true);
      expect((await a.get(LEASE))?.holder).toBe('holder-b');
      expect(await a.renew(LEASE, 'holder-a', LONG)).toBe(false);
    });

    it('keeps leases through a reset of the read models', async () => {
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(true);
      await fixture.first.reset();
      expect((await b.get(LEASE))?.holder).toBe('holder-a');
      expect(await b.acquire(LEASE, 'holder-b', LONG)).toBe(false);
    });

    it('counts an epoch up on every change of hands, never on a renewal or a repeated take, and never back', async () => {
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(true);
      const first = (await a.get(LEASE))!.epoch;
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(true);
      expect(await a.renew(LEASE, 'holder-a', LONG)).toBe(true);
      expect((await b.get(LEASE))?.epoch).toBe(first);
      // Released, then taken by another holder.
      await a.release(LEASE, 'holder-a');
      expect(await b.acquire(LEASE, 'holder-b', 150)).toBe(true);
      expect((await a.get(LEASE))?.epoch).toBe(first + 1);
      // Expired, then taken.
      await sleep(250);
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(true);
      expect((await b.get(LEASE))?.epoch).toBe(first + 2);
      // Taken from a holder known to be gone.
      expect(await b.acquire(LEASE, 'holder-b', LONG, 'holder-a')).toBe(true);
      expect(await a.get(LEASE)).toMatchObject({ holder: 'holder-b', epoch: first + 3 });
      // A refused take changes nothing.
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(false);
      expect((await a.get(LEASE))?.epoch).toBe(first + 3);
    });

    it('refuses a projection write carrying an older epoch, and writes nothing of it', async () => {
      expect(await a.acquire(LEASE, 'holder-a', LONG)).toBe(true);
      const oldFence = { lease: LEASE, epoch: (await a.get(LEASE))!.epoch };
      expect(await fixture.first.apply('fenced', 1n, (tx) => tx.users.put(user('u1', 'alice')), oldFence)).toBe(true);
      // The holder stalls; another process takes the lease over.
      expect(await b.acquire(LEASE, 'holder-b', LONG, 'holder-a')).toBe(true);
      const newFence = { lease: LEASE, epoch: (await b.get(LEASE))!.epoch };
      expect(newFence.epoch).toBe(oldFence.epoch + 1);
      // The stalled holder wakes up and writes: refused, through either connection.
      for (const stalled of [fixture.first, fixture.second]) {
        const refused = stalled.apply('fenced', 2n, (tx) => tx.users.put(user('u2', 'bob')), oldFence);
        await expect(refused).rejects.toBeInstanceOf(FencedOffError);
        await expect(refused).rejects.toThrow(
          `Projection write refused: lease ${LEASE} is at epoch ${newFence.epoch}, this holder's epoch is ${oldFence.epoch}.`,
        );
      }
      expect(await fixture.second.checkpoint('fenced')).toBe(1n);
      expect(await fixture.second.users.get('u2')).toBeNull();
      // The new holder writes on; once it released the lease, the old epoch is still refused.
      expect(await fixture.second.apply('fenced', 2n, (tx) => tx.users.put(user('u3', 'carol')), newFence)).toBe(true);
      await b.release(LEASE, 'holder-b');
      await expect(
        fixture.first.apply('fenced', 3n, (tx) => tx.users.put(user('u2', 'bob')), oldFence),
      ).rejects.toBeInstanceOf(FencedOffError);
      expect(await fixture.first.checkpoint('fenced')).toBe(2n);
      expect((await fixture.first.users.get('u3'))?.login).toBe('carol');
      expect(await fixture.first.users.get('u2')).toBeNull();
    });
  });
}
