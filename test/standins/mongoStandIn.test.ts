import type { MongoServerError } from 'mongodb';
import { MongoStandIn } from '../support/mongoStandIn';

/**
 * The MongoDB stand-in is held to the server's behaviour where the adapters depend on it: each test here fails on a
 * stand-in that is kinder than a replica set (one transaction at a time, no limits, silent type errors, UTF-16
 * string order, no latency).
 */

type Doc = Record<string, unknown>;

function standIn(options: ConstructorParameters<typeof MongoStandIn>[0] = {}) {
  const client = new MongoStandIn(options);
  const db = client.db('strict');
  return { client, counters: db.collection('counters'), db };
}

/** What a promise rejected with (fails when it resolved). */
async function rejection(promise: Promise<unknown>): Promise<MongoServerError> {
  try {
    await promise;
  } catch (error) {
    return error as MongoServerError;
  }
  throw new Error('expected a rejection');
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('MongoStandIn transactions (snapshot isolation, as on a replica set)', () => {
  it('fails the second of two open transactions writing one document with a transient WriteConflict', async () => {
    const { client, counters } = standIn();
    await counters.insertOne({ _id: 'c', n: 0 });
    const first = client.startSession();
    const second = client.startSession();
    const firstWrote = gate();
    const secondTried = gate();
    const errors: MongoServerError[] = [];
    const a = first.withTransaction(async (session) => {
      await counters.updateOne({ _id: 'c' }, { $inc: { n: 1 } }, { session: session as never });
      firstWrote.open();
      await secondTried.opened;
    });
    await firstWrote.opened;
    const b = second.withTransaction(async (session) => {
      try {
        await counters.updateOne({ _id: 'c' }, { $inc: { n: 10 } }, { session: session as never });
      } catch (error) {
        errors.push(error as MongoServerError);
        throw error;
      } finally {
        secondTried.open();
      }
    });
    await Promise.all([a, b]);
    expect(errors[0]).toMatchObject({ code: 112, codeName: 'WriteConflict' });
    expect(errors[0].hasErrorLabel('TransientTransactionError')).toBe(true);
    // withTransaction ran the second again once the first had committed: both increments count.
    expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 11 });
  });

  it('reads a snapshot, and refuses to write a document committed after the transaction started', async () => {
    const { client, counters } = standIn({ withTransactionTimeoutMs: 0 });
    await counters.insertOne({ _id: 'c', n: 1 });
    const session = client.startSession();
    const seen: unknown[] = [];
    const error = await rejection(
      session.withTransaction(async (s) => {
        seen.push((await counters.findOne({ _id: 'c' }, { session: s as never }))?.n);
        await counters.updateOne({ _id: 'c' }, { $set: { n: 2 } }); // outside the transaction: commits at once
        seen.push((await counters.findOne({ _id: 'c' }, { session: s as never }))?.n);
        seen.push((await counters.find({}, { session: s as never }).toArray()).map((d) => d.n));
        await counters.updateOne({ _id: 'c' }, { $set: { n: 3 } }, { session: s as never });
      }),
    );
    expect(seen).toEqual([1, 1, [1]]);
    expect(error).toMatchObject({ code: 112, codeName: 'WriteConflict' });
    expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 2 });
  });

  it('makes a write outside a transaction wait for the transaction holding its document', async () => {
    const { client, counters } = standIn();
    await counters.insertOne({ _id: 'c', n: 0 });
    const session = client.startSession();
    const wrote = gate();
    const release = gate();
    const order: string[] = [];
    const txn = session.withTransaction(async (s) => {
      await counters.updateOne({ _id: 'c' }, { $set: { n: 1 } }, { session: s as never });
      wrote.open();
      await release.opened;
      order.push('commit');
    });
    await wrote.opened;
    const outside = counters.updateOne({ _id: 'c' }, { $inc: { n: 5 } }).then(() => order.push('outside'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    // Other documents are not held.
    await counters.insertOne({ _id: 'd', n: 0 });
    release.open();
    await Promise.all([txn, outside]);
    expect(order).toEqual(['commit', 'outside']);
    expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 6 });
  });

  it('aborts a transaction past its lifetime, and withTransaction gives up after its retry window', async () => {
    const { client, counters } = standIn({ transactionLifetimeMs: 30, withTransactionTimeoutMs: 200 });
    const session = client.startSession();
    let attempts = 0;
    const error = await rejection(
      session.withTransaction(async (s) => {
        attempts += 1;
        await counters.insertOne({ _id: `a${attempts}` }, { session: s as never });
        await new Promise((resolve) => setTimeout(resolve, 50));
        await counters.insertOne({ _id: `b${attempts}` }, { session: s as never });
      }),
    );
    expect(error).toMatchObject({ code: 251, codeName: 'NoSuchTransaction' });
    expect(error.message).toMatch(/^Transaction with \{ txnNumber: \d+ \} has been aborted\.$/);
    expect(error.hasErrorLabel('TransientTransactionError')).toBe(true);
    expect(attempts).toBeGreaterThan(1);
    expect(await counters.countDocuments({})).toBe(0);
  });

  it('refuses a transaction that writes more than maxTransactionWrites documents, not as a transient error', async () => {
    const { client, counters } = standIn({ maxTransactionWrites: 3 });
    const session = client.startSession();
    let attempts = 0;
    const error = await rejection(
      session.withTransaction(async (s) => {
        attempts += 1;
        // The same document twice counts once.
        for (const id of ['a', 'b', 'a', 'c', 'd'])
          await counters.updateOne({ _id: id }, { $inc: { n: 1 } }, { session: s as never, upsert: true });
      }),
    );
    expect(error).toMatchObject({ code: 334, codeName: 'TransactionTooLargeForCache' });
    expect(error.hasErrorLabel('TransientTransactionError')).toBe(false);
    expect(attempts).toBe(1);
    expect(await counters.countDocuments({})).toBe(0);
    // Outside a transaction each document is its own write: no bound.
    await counters.insertMany(['a', 'b', 'c', 'd', 'e'].map((id) => ({ _id: id })));
    expect(await counters.countDocuments({})).toBe(5);
  });

  it('aborts the transaction on a failed statement (a duplicate key): nothing of it is committed', async () => {
    // The abort's NoSuchTransaction is transient: withTransaction would run the callback again until its window ends.
    const { client, counters } = standIn({ withTransactionTimeoutMs: 0 });
    await counters.insertOne({ _id: 'taken' });
    const session = client.startSession();
    const error = await rejection(
      session.withTransaction(async (s) => {
        await counters.insertOne({ _id: 'new' }, { session: s as never });
        await counters.insertOne({ _id: 'taken' }, { session: s as never }).catch(() => undefined);
        await counters.insertOne({ _id: 'after' }, { session: s as never });
      }),
    );
    expect(error).toMatchObject({ code: 251, codeName: 'NoSuchTransaction' });
    expect((await counters.find({}).toArray()).map((d) => d._id)).toEqual(['taken']);
  });

  it('keeps unique index keys unique across concurrent transactions', async () => {
    const { client, db } = standIn({ withTransactionTimeoutMs: 0 });
    const names = db.collection('names');
    await names.createIndex({ name: 1 }, { unique: true });
    const first = client.startSession();
    const wrote = gate();
    const release = gate();
    const a = first.withTransaction(async (s) => {
      await names.insertOne({ _id: 1, name: 'x' }, { session: s as never });
      wrote.open();
      await release.opened;
    });
    await wrote.opened;
    const error = await rejection(
      client.startSession().withTransaction(async (s) => {
        await names.insertOne({ _id: 2, name: 'x' }, { session: s as never });
      }),
    );
    release.open();
    await a;
    expect(error).toMatchObject({ code: 112 });
    expect(await names.find({}).toArray()).toEqual([{ _id: 1, name: 'x' }]);
  });
});

describe('MongoStandIn limits (16 MiB BSON documents)', () => {
  const big = 'x'.repeat(16 * 1024 * 1024);

  it('refuses to insert a document over 16 MiB', async () => {
    const { counters } = standIn();
    const error = await rejection(counters.insertOne({ _id: 'big', big }));
    expect(error).toMatchObject({ code: 2, codeName: 'BadValue' });
    expect(error.message).toMatch(/^object to insert too large\. size in bytes: 167772\d\d, max size: 16777216$/);
    expect(await counters.countDocuments({})).toBe(0);
  });

  it('refuses an update whose result is over 16 MiB', async () => {
    const { counters } = standIn();
    await counters.insertOne({ _id: 'd', a: 'x'.repeat(9 * 1024 * 1024) });
    const error = await rejection(counters.updateOne({ _id: 'd' }, [{ $set: { b: '$a' } }]));
    expect(error).toMatchObject({ code: 17419, message: 'Resulting document after update is larger than 16777216' });
    expect(Object.keys((await counters.findOne({ _id: 'd' }))!)).toEqual(['_id', 'a']);
  });

  it('refuses a result document over 16 MiB (one $facet of many matches)', async () => {
    const { counters } = standIn();
    const chunk = 'y'.repeat(1024 * 1024);
    await counters.insertMany(Array.from({ length: 17 }, (_, i) => ({ _id: i, chunk })));
    const error = await rejection(counters.aggregate([{ $facet: { all: [{ $match: {} }] } }]).toArray());
    expect(error).toMatchObject({ code: 10334, codeName: 'BSONObjectTooLarge' });
    expect(error.message).toMatch(
      /^BSONObj size: \d+ \(0x[0-9A-F]+\) is invalid\. Size must be between 0 and 16793600\(16MB\)$/,
    );
    expect(await counters.aggregate([{ $facet: { all: [{ $match: { _id: { $lt: 15 } } }] } }]).toArray()).toHaveLength(
      1,
    );
  });

  it('refuses a statement over the limit (an $in of too many ids)', async () => {
    const { counters } = standIn();
    const ids = Array.from({ length: 300 }, (_, i) => `${i}-${'x'.repeat(60 * 1024)}`);
    const error = await rejection(counters.find({ _id: { $in: ids } }).toArray());
    expect(error).toMatchObject({ code: 10334, codeName: 'BSONObjectTooLarge' });
    expect(await rejection(counters.deleteMany({ _id: { $in: ids } }))).toMatchObject({ code: 10334 });
  });
});

describe('MongoStandIn update operators refuse the types the server refuses', () => {
  it('$inc on a string: 14 TypeMismatch, nothing changed', async () => {
    const { counters } = standIn();
    await counters.insertOne({ _id: 'c', n: 'seven' });
    const error = await rejection(counters.updateOne({ _id: 'c' }, { $inc: { n: 1 } }));
    expect(error).toMatchObject({
      code: 14,
      codeName: 'TypeMismatch',
      message: `Cannot apply $inc to a value of non-numeric type. {_id: "c"} has the field 'n' of non-numeric type string`,
    });
    expect(await rejection(counters.updateOne({ _id: 'c' }, { $inc: { m: 'one' } }))).toMatchObject({
      code: 14,
      message: 'Cannot increment with non-numeric argument: {m: "one"}',
    });
    expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 'seven' });
  });

  it('$push and $addToSet on a non-array: 2 BadValue, nothing changed', async () => {
    const { counters } = standIn();
    await counters.insertOne({ _id: 'c', tags: 'a' });
    expect(await rejection(counters.updateOne({ _id: 'c' }, { $push: { tags: 'b' } }))).toMatchObject({
      code: 2,
      codeName: 'BadValue',
      message: `The field 'tags' must be an array but is of type string in document {_id: "c"}`,
    });
    expect(await rejection(counters.updateOne({ _id: 'c' }, { $addToSet: { tags: 'b' } }))).toMatchObject({
      code: 2,
      message: `Cannot apply $addToSet to non-array field. Field named 'tags' has non-array type string`,
    });
    expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', tags: 'a' });
  });

  it('still applies them to the right types', async () => {
    const { counters } = standIn();
    await counters.updateOne({ _id: 'c' }, { $inc: { n: 2 }, $push: { tags: 'a' } }, { upsert: true });
    await counters.updateOne({ _id: 'c' }, { $inc: { n: 3 }, $addToSet: { tags: 'a' } });
    expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 5, tags: ['a'] });
  });
});

describe('MongoStandIn string order (UTF-8 bytes, as the server compares without a collation)', () => {
  // U+FF5E (one UTF-16 unit, 3 UTF-8 bytes) sorts before U+1F600 (a surrogate pair, 4 UTF-8 bytes) on the server;
  // JavaScript's UTF-16 comparison puts the surrogate pair first.
  const names = ['\u{1F600} smile', '\uFF5E tilde', 'z'];

  it('sorts find results and pipeline $sort stages (inside $facet too) by code point', async () => {
    const { counters } = standIn();
    await counters.insertMany(names.map((name, i) => ({ _id: i, name })));
    const expected = ['z', '\uFF5E tilde', '\u{1F600} smile'];
    expect((await counters.find({}, { sort: { name: 1 } }).toArray()).map((d) => d.name)).toEqual(expected);
    expect((await counters.find({}, { sort: { name: -1 } }).toArray()).map((d) => d.name)).toEqual(
      [...expected].reverse(),
    );
    // Fields of Object.prototype are no fields of a document: they sort as missing.
    expect((await counters.find({}, { sort: { constructor: 1, toString: -1 } }).toArray()).map((d) => d._id)).toEqual([
      0, 1, 2,
    ]);
    const [faceted] = await counters
      .aggregate([{ $facet: { sorted: [{ $sort: { name: 1 } }, { $project: { _id: 0, name: 1 } }] } }])
      .toArray();
    expect((faceted.sorted as Doc[]).map((d) => d.name)).toEqual(expected);
  });
});

describe('MongoStandIn latency', () => {
  it('delays every round trip by latencyMs', async () => {
    const { client, counters } = standIn({ latencyMs: 25 });
    const started = Date.now();
    await counters.insertOne({ _id: 'c' });
    await counters.findOne({ _id: 'c' });
    const session = client.startSession();
    await session.withTransaction(async (s) => {
      await counters.updateOne({ _id: 'c' }, { $set: { n: 1 } }, { session: s as never });
    });
    // insert, find, update, commit
    expect(client.roundTrips).toBe(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 25 - 5);
  });
});

describe('MongoStandIn commits with an unknown outcome (UnknownTransactionCommitResult)', () => {
  for (const committed of [true, false]) {
    it(`retries the commit alone, not the callback, when the first commit's answer was lost (${committed ? 'after' : 'before'} it committed)`, async () => {
      const { client, counters } = standIn();
      await counters.insertOne({ _id: 'c', n: 0 });
      client.unknownCommitResults(1, { committed });
      let runs = 0;
      await client.startSession().withTransaction(async (s) => {
        runs += 1;
        await counters.updateOne({ _id: 'c' }, { $inc: { n: 1 } }, { session: s as never });
      });
      expect(runs).toBe(1);
      expect(client.unknownCommits).toBe(1);
      expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 1 });
    });
  }

  it('fails with the label, as the driver labels it, once withTransaction has no time left', async () => {
    const { client, counters } = standIn({ withTransactionTimeoutMs: 0 });
    client.unknownCommitResults(1, { committed: false });
    const error = await rejection(
      client.startSession().withTransaction(async (s) => {
        await counters.insertOne({ _id: 'x' }, { session: s as never });
      }),
    );
    expect(error).toMatchObject({ code: 91, codeName: 'ShutdownInProgress' });
    expect(error.hasErrorLabel('UnknownTransactionCommitResult')).toBe(true);
    expect(error.hasErrorLabel('TransientTransactionError')).toBe(false);
  });
});
