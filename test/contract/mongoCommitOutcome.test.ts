import { MongoReadModel } from '../../src/infra/readmodel/mongodb/mongoReadModel';
import type { ReadModelTx } from '../../src/ports/readModel';
import { MongoStandIn } from '../support/mongoStandIn';
import { folder, user } from './readModelContract';

/**
 * The MongoDB read model when a commit's answer is lost (UnknownTransactionCommitResult, over the strict stand-in):
 * the driver's `withTransaction`, which the adapter runs every event and batch in, repeats the commit alone; the
 * event is applied once, its checkpoint moved once, and its writes are not sent again.
 */

async function overStandIn() {
  const standIn = new MongoStandIn({ transactions: true });
  const readModel = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb());
  return { standIn, readModel };
}

const EVENTS: ((tx: ReadModelTx) => void)[] = [
  (tx) => tx.users.put(user('u1', 'alice')),
  (tx) => tx.folders.insert(folder('f1', 'Docs', { type: 'user', id: 'u1' })),
  (tx) => tx.folders.insert(folder('f2', 'Photos', { type: 'folder', id: 'f1' })),
];

/** Round trips of applying every event, one `apply` each, with `unknown` commits answered with an unknown outcome. */
async function applyAll(unknown: number, committed: boolean) {
  const { standIn, readModel } = await overStandIn();
  standIn.unknownCommitResults(unknown, { committed });
  const before = standIn.roundTrips;
  const applied: boolean[] = [];
  for (const [i, event] of EVENTS.entries()) applied.push(await readModel.apply('rm', BigInt(i + 1), event));
  return { standIn, readModel, applied, roundTrips: standIn.roundTrips - before };
}

describe('MongoReadModel: commits whose outcome is unknown', () => {
  for (const committed of [true, false]) {
    it(`applies each event once, its commit repeated and nothing else (${committed ? 'answer lost after the commit' : 'commit lost on the way'})`, async () => {
      const clean = await applyAll(0, committed);
      const lost = await applyAll(EVENTS.length, committed);
      expect(lost.standIn.unknownCommits).toBe(EVENTS.length);
      expect(lost.applied).toEqual([true, true, true]);
      expect(await lost.readModel.checkpoint('rm')).toBe(3n);
      expect(await lost.readModel.dump()).toEqual(await clean.readModel.dump());
      // One more round trip per event (the repeated commit): the event's reads and writes were not run again.
      expect(lost.roundTrips - clean.roundTrips).toBe(EVENTS.length);
    });
  }

  it('applies a batch once when its commit answer is lost', async () => {
    const { standIn, readModel } = await overStandIn();
    standIn.unknownCommitResults(1);
    const batch = EVENTS.map((write, i) => ({ position: BigInt(i + 1), write }));
    expect(await readModel.applyBatch('rm', batch)).toBe(EVENTS.length);
    expect(standIn.unknownCommits).toBe(1);
    expect(await readModel.checkpoint('rm')).toBe(3n);
    expect((await readModel.folders.get('f2'))?.name).toBe('Photos');
    expect(await readModel.applyBatch('rm', batch)).toBe(0);
  });
});
