import { MongoReadModel, type MongoReadModelOptions } from '../../src/infra/readmodel/mongodb/mongoReadModel';
import { FencedOffError, type ReadModelTx } from '../../src/ports/readModel';
import type { Viewer } from '../../src/domain/access';
import { ReadModelBusyError } from '../../src/ports/readModelBusy';
import { deriveId } from '../../src/domain/ids';
import { MongoStandIn, StandInCrash } from '../support/mongoStandIn';
import { collection, folder, insertFolderTree, insertItemsWithFiles, numberedId } from './readModelContract';

/**
 * Subtree events too large for one MongoDB transaction (issue 32). The strict stand-in refuses a transaction that
 * writes more than 60 documents (TransactionTooLargeForCache, as the server refuses one past its cache share or
 * lifetime); a copy, delete or move of 80 folders with an item and a file each writes several hundred. Each must
 * complete, readers must see it whole or not at all while it applies, and a crash in the middle followed by a
 * restart must finish it exactly once: the read model then equals one that applied it in a single transaction.
 * On the old adapter each event failed with TransactionTooLargeForCache, at every retry.
 */

const FOLDERS = 80;
const TRANSACTION_WRITES = 60;
const T1 = '2024-03-01T00:00:00.000Z';
const id = numberedId;
const admin: Viewer = { id: 'u1', admin: true, groups: [] };
const DEEPEST = id('f', FOLDERS - 1);
const ROOT_SIZE = FOLDERS; // one byte per item
const OP_ID = '65a0000000000000000000aa';

/** The events under test, each at the position after the fixtures. */
const EVENTS: Record<'copy' | 'delete' | 'move', (tx: ReadModelTx, position: bigint) => void> = {
  copy: (tx, position) =>
    tx.subtree.copyFolder(
      {
        opId: OP_ID,
        sourceId: 'root',
        folderId: 'copy',
        parentType: 'folder',
        parentId: 'dest',
        name: 'Copy',
        description: '',
        access: { users: [], groups: [] },
        creatorId: 'u1',
        created: T1,
        meta: {},
        copier: admin,
      },
      position,
    ),
  delete: (tx, position) => tx.subtree.deleteFolder('root', position),
  move: (tx) => tx.folders.move('root', 'folder', 'dest', T1),
};
type Kind = keyof typeof EVENTS;

/** What a reader sees of the event: one value before it, another after, and nothing else is allowed. */
async function observe(readModel: MongoReadModel, kind: Kind): Promise<string> {
  switch (kind) {
    case 'copy':
      return `count ${await readModel.subtree.subtreeCount('copy')}, c2 ${(await readModel.collections.get('c2'))?.size}`;
    case 'delete':
      return `count ${await readModel.subtree.subtreeCount('root')}, c1 ${(await readModel.collections.get('c1'))?.size}`;
    case 'move':
      return `ancestors ${(await readModel.folders.ancestorIds(DEEPEST)).join('/')}, c2 ${(await readModel.collections.get('c2'))?.size}`;
  }
}
/** A read of what the event writes early: true once it is written. */
const EARLY: Record<Kind, (readModel: MongoReadModel) => Promise<boolean>> = {
  copy: async (readModel) => (await readModel.folders.get(deriveId(OP_ID, id('f', 0)))) !== null,
  delete: async (readModel) => (await readModel.items.get(id('i', 0))) === null,
  move: async (readModel) => (await readModel.folders.ancestorIds(DEEPEST))[0] === 'dest',
};
/** A read of what the event writes last (its root): true once it is written. */
const LATE: Record<Kind, (readModel: MongoReadModel) => Promise<boolean>> = {
  copy: async (readModel) => (await readModel.folders.get('copy')) !== null,
  delete: async (readModel) => (await readModel.folders.get('root')) === null,
  move: async (readModel) => (await readModel.folders.get('root'))?.parentId === 'dest',
};
/**
 * A reader's two queries, one after the other: the first reads what the event writes early, the second what it
 * writes last; each answers B (as before the event) or A (as after it). B then A is a read that straddled the event's
 * end; A then B can only be read while the event is half applied.
 */
async function observeEarlyThenLate(readModel: MongoReadModel, kind: Kind): Promise<string> {
  const letter = (after: boolean) => (after ? 'A' : 'B');
  return letter(await EARLY[kind](readModel)) + letter(await LATE[kind](readModel));
}

const WHOLE = 1 + 2 * FOLDERS;
const BEFORE: Record<Kind, string> = {
  copy: 'count 0, c2 0',
  delete: `count ${WHOLE}, c1 ${ROOT_SIZE}`,
  move: `ancestors root/${id('f', (FOLDERS - 1) % 10)}, c2 0`,
};
const AFTER: Record<Kind, string> = {
  copy: `count ${WHOLE}, c2 ${ROOT_SIZE}`,
  delete: 'count 0, c1 0',
  move: `ancestors dest/root/${id('f', (FOLDERS - 1) % 10)}, c2 ${ROOT_SIZE}`,
};

const OPTIONS: MongoReadModelOptions = { aliasCacheMs: 5, stepwiseAbove: 50, documentsPerStep: 50 };

/**
 * A stand-in holding collection c1 with `root` (FOLDERS folders below it, two levels, an item of one byte and a file
 * in each) and collection c2 with `dest`, written before the transaction limit is lowered.
 */
async function fixture(
  options: { limited: boolean; latencyMs?: number; transactionLifetimeMs?: number } = { limited: true },
) {
  const standIn = new MongoStandIn({ transactions: true, transactionLifetimeMs: options.transactionLifetimeMs });
  const readModel = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), OPTIONS);
  let position = 0n;
  const apply = (write: (tx: ReadModelTx) => void) => readModel.apply('rm', ++position, write);
  await apply((tx) => {
    tx.collections.put(collection('c1', 'Source'));
    tx.collections.put(collection('c2', 'Target'));
    tx.folders.insert(folder('root', 'Root', { type: 'collection', id: 'c1' }));
    tx.folders.insert(folder('dest', 'Dest', { type: 'collection', id: 'c2' }));
    insertFolderTree(tx, 'root', FOLDERS, 10);
  });
  await apply((tx) => insertItemsWithFiles(tx, FOLDERS));
  if (options.limited) standIn.maxTransactionWrites = TRANSACTION_WRITES;
  standIn.latencyMs = options.latencyMs ?? 0;
  const next = position + 1n;
  return { standIn, readModel, next };
}

/** The read model after `kind` applied in one transaction, with no limit: what a stepwise apply must equal. */
async function applyInOneTransaction(kind: Kind) {
  const { standIn, next } = await fixture({ limited: false });
  const readModel = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), {
    ...OPTIONS,
    stepwiseAbove: Infinity,
  });
  expect(await readModel.apply('rm', next, (tx) => EVENTS[kind](tx, next))).toBe(true);
  return readModel.dump();
}

const alias = (standIn: MongoStandIn) => standIn.db('rm').collection('rm_meta').findOne({ _id: 'alias' });

describe.each(Object.keys(EVENTS) as Kind[])('MongoDB read model: a %s larger than one transaction', (kind) => {
  let reference: Record<string, unknown[]>;
  beforeAll(async () => {
    reference = await applyInOneTransaction(kind);
  });

  it('completes, and a reader during the apply sees it whole or not at all', async () => {
    const { standIn, readModel, next } = await fixture({ limited: true, latencyMs: 1 });
    expect(await observe(readModel, kind)).toBe(BEFORE[kind]);
    // A second process reading the same database, with its own view of the alias.
    const reader = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), OPTIONS);
    const seen = new Set<string>();
    // When the barrier was seen up (a watcher looks every round trip), and when each read began and ended.
    const barrierUp: number[] = [];
    const reads: { from: number; to: number }[] = [];
    let done = false;
    const watching = (async () => {
      while (!done) if (Object.keys((await alias(standIn))?.applying ?? {}).length > 0) barrierUp.push(Date.now());
    })();
    const reading = (async () => {
      while (!done) {
        const from = Date.now();
        seen.add(await observeEarlyThenLate(reader, kind));
        reads.push({ from, to: Date.now() });
      }
    })();
    const applied = readModel.apply('rm', next, (tx) => EVENTS[kind](tx, next)).finally(() => (done = true));
    expect(await applied).toBe(true);
    await Promise.all([watching, reading]);
    // Some read overlapped the barrier: the check below is about reads made while the event was half applied.
    expect(barrierUp.length).toBeGreaterThan(0);
    const [up, down] = [barrierUp[0], barrierUp[barrierUp.length - 1]];
    expect(reads.filter((read) => read.from <= down && read.to >= up).length).toBeGreaterThan(0);
    expect([...seen].filter((view) => view === 'AB')).toEqual([]);
    expect(await observe(readModel, kind)).toBe(AFTER[kind]);
    expect(await readModel.checkpoint('rm')).toBe(next);
    expect((await alias(standIn))?.applying).toEqual({});
    expect(await readModel.dump()).toEqual(reference);
  });

  it.each([40, 250])(
    'crashes after %i writes, holds readers, and finishes exactly once when restarted',
    async (writes) => {
      const { standIn, readModel, next } = await fixture();
      standIn.failAfterWrites(writes);
      await expect(readModel.apply('rm', next, (tx) => EVENTS[kind](tx, next))).rejects.toThrow(StandInCrash);
      expect(await readModel.checkpoint('rm')).toBe(next - 1n);
      // The barrier stands: a reader waits, then gives up with what the HTTP layer answers 503 (Retry-After).
      const reader = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), {
        ...OPTIONS,
        barrierWaitMs: 100,
      });
      await expect(observe(reader, kind)).rejects.toThrow(ReadModelBusyError);
      // The restarted process resumes the same event from the barrier.
      const restarted = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), OPTIONS);
      expect(await restarted.apply('rm', next, (tx) => EVENTS[kind](tx, next))).toBe(true);
      expect(await restarted.apply('rm', next, (tx) => EVENTS[kind](tx, next))).toBe(false);
      expect(await observe(reader, kind)).toBe(AFTER[kind]);
      expect(await restarted.dump()).toEqual(reference);
    },
  );

  it('a read that began before the barrier rose, and ended after the event began to write, is read again whole', async () => {
    // Both hold the alias for 100 ms, so the event's first write comes 200 ms after its barrier rose.
    const slow: MongoReadModelOptions = { ...OPTIONS, aliasCacheMs: 100 };
    const { standIn, next } = await fixture();
    const writer = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), slow);
    const reader = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), slow);
    // The reader's view of the alias: no barrier; fresh for 100 ms.
    expect(await EARLY[kind](reader)).toBe(false);
    // Its next query is held on the way to the server (a slow query, a paused process) ...
    const held = standIn.pauseAfterWrites(0);
    const read = EARLY[kind](reader);
    await held.reached;
    // ... while the event raises its barrier and writes part of itself (and its process dies).
    standIn.failAfterWrites(250);
    await expect(writer.apply('rm', next, (tx) => EVENTS[kind](tx, next))).rejects.toThrow(StandInCrash);
    held.resume();
    // The query then reads a half-applied event: its answer is not taken, and the read waits for the barrier.
    const outcome = await Promise.race([
      read.then(() => 'answered'),
      new Promise((resolve) => setTimeout(resolve, 500)).then(() => 'waiting'),
    ]);
    expect(outcome).toBe('waiting');
    expect(await writer.apply('rm', next, (tx) => EVENTS[kind](tx, next))).toBe(true);
    expect(await read).toBe(true);
    expect(await LATE[kind](reader)).toBe(true);
  });

  it.each([20, 75])(
    'a projector paused after %i writes that lost its lease writes nothing more; the new holder finishes once',
    async (writes) => {
      // The "server" aborts a transaction left open past 300 ms (its lifetime limit), as it would the paused one's.
      const { standIn, readModel: first, next } = await fixture({ limited: true, transactionLifetimeMs: 300 });
      const second = await MongoReadModel.open(standIn.asClient(), standIn.db('rm').asDb(), OPTIONS);
      const fenceOf = async (holder: string) => {
        expect(await first.leases.acquire('projector', holder, 60_000, 'first')).toBe(true);
        return { lease: 'projector', epoch: (await first.leases.get('projector'))?.epoch ?? -1 };
      };
      const firstFence = await fenceOf('first');
      const pause = standIn.pauseAfterWrites(writes);
      const firstApply = first.apply('rm', next, (tx) => EVENTS[kind](tx, next), firstFence);
      firstApply.catch(() => undefined);
      await pause.reached;
      // The first holder is gone as far as anyone can tell: the second takes the lease over and resumes the event.
      const secondFence = await fenceOf('second');
      expect(secondFence.epoch).toBe(firstFence.epoch + 1);
      const committed = standIn.version;
      pause.resume();
      await expect(firstApply).rejects.toThrow(FencedOffError);
      // Not one document changed after the takeover: every write of the first holder's was refused.
      expect(standIn.version).toBe(committed);
      expect(await second.apply('rm', next, (tx) => EVENTS[kind](tx, next), secondFence)).toBe(true);
      expect(await second.apply('rm', next, (tx) => EVENTS[kind](tx, next), secondFence)).toBe(false);
      expect(await second.checkpoint('rm')).toBe(next);
      expect((await alias(standIn))?.applying).toEqual({});
      expect(await observe(first, kind)).toBe(AFTER[kind]);
      expect(await second.dump()).toEqual(reference);
    },
  );
});
