import { randomUUID } from 'node:crypto';
import {
  MAX_APPEND_SIZE,
  MaxAppendSizeExceededError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type EventMetadata,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
  type Subscription,
  type SubscriptionItem,
} from '../../src/ports/eventStore';

/**
 * The EventStore contract: every adapter (embedded SQLite, KurrentDB) must pass it unchanged.
 *
 * Adapter-agnostic by construction: the store may already hold other events (a shared KurrentDB server, system
 * streams), so every test writes to streams of its own fresh category and reads `$all` through a prefix filter
 * and/or from the head position it noted first. Nothing assumes particular position values, only their order.
 */
export function eventStoreContract(
  name: string,
  makeStore: () => Promise<{ store: EventStore; cleanup: () => Promise<void> }>,
): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterAll(async () => {
      await cleanup();
    });

    describe('appendToStream and expected state', () => {
      it('numbers revisions from 0 and reports the last one written', async () => {
        const s = stream();
        const first = await store.appendToStream(s, [ev('A')], { expectedState: 'no_stream' });
        expect(first.nextExpectedRevision).toBe(0n);
        const next = await store.appendToStream(s, [ev('B'), ev('C')], { expectedState: 0n });
        expect(next.nextExpectedRevision).toBe(2n);
        expect(next.position).toBeGreaterThan(first.position);
        expect(await store.streamRevision(s)).toBe(2n);
        const events = await collect(store.readStream(s));
        expect(events.map((e) => e.revision)).toEqual([0n, 1n, 2n]);
        expect(events.map((e) => e.type)).toEqual(['A', 'B', 'C']);
        expect(events[2].position).toBe(next.position);
      });

      it("'no_stream' succeeds only on a stream without events", async () => {
        const s = stream();
        await store.appendToStream(s, [ev('A')], { expectedState: 'no_stream' });
        const err = await rejection(store.appendToStream(s, [ev('B')], { expectedState: 'no_stream' }));
        expectWrongExpectedVersion(err, s, 'no_stream', 0n);
      });

      it("'any' succeeds whether or not the stream exists", async () => {
        const s = stream();
        expect((await store.appendToStream(s, [ev('A')], { expectedState: 'any' })).nextExpectedRevision).toBe(0n);
        expect((await store.appendToStream(s, [ev('B')], { expectedState: 'any' })).nextExpectedRevision).toBe(1n);
      });

      it("'exists' fails on a missing stream and succeeds on an existing one", async () => {
        const s = stream();
        const err = await rejection(store.appendToStream(s, [ev('A')], { expectedState: 'exists' }));
        expectWrongExpectedVersion(err, s, 'exists', 'no_stream');
        await store.appendToStream(s, [ev('A')], { expectedState: 'no_stream' });
        expect((await store.appendToStream(s, [ev('B')], { expectedState: 'exists' })).nextExpectedRevision).toBe(1n);
      });

      it('an exact revision succeeds only when it is the current revision', async () => {
        const s = stream();
        const missing = await rejection(store.appendToStream(s, [ev('A')], { expectedState: 0n }));
        expectWrongExpectedVersion(missing, s, 0n, 'no_stream');
        await store.appendToStream(s, [ev('A'), ev('B')], { expectedState: 'no_stream' });
        const stale = await rejection(store.appendToStream(s, [ev('C')], { expectedState: 0n }));
        expectWrongExpectedVersion(stale, s, 0n, 1n);
        const ahead = await rejection(store.appendToStream(s, [ev('C')], { expectedState: 5n }));
        expectWrongExpectedVersion(ahead, s, 5n, 1n);
        expect((await store.appendToStream(s, [ev('C')], { expectedState: 1n })).nextExpectedRevision).toBe(2n);
      });

      it('a failed expectation writes nothing', async () => {
        const s = stream();
        await store.appendToStream(s, [ev('A')], { expectedState: 'no_stream' });
        await rejection(store.appendToStream(s, [ev('B'), ev('C')], { expectedState: 7n }));
        expect(await store.streamRevision(s)).toBe(0n);
        expect((await collect(store.readStream(s))).map((e) => e.type)).toEqual(['A']);
      });

      it('appending no events checks the expectation and returns the current state', async () => {
        const s = stream();
        const none = await store.appendToStream(s, [], { expectedState: 'no_stream' });
        expect(none.nextExpectedRevision).toBe(-1n);
        expect(none.position).toBeLessThanOrEqual(await store.headPosition());
        expect(await store.streamRevision(s)).toBe('no_stream');

        const written = await store.appendToStream(s, [ev('A'), ev('B')], { expectedState: 'no_stream' });
        const again = await store.appendToStream(s, [], { expectedState: 1n });
        expect(again.nextExpectedRevision).toBe(1n);
        expect(again.position).toBeGreaterThanOrEqual(written.position);
        const err = await rejection(store.appendToStream(s, [], { expectedState: 0n }));
        expectWrongExpectedVersion(err, s, 0n, 1n);
        expect(await store.streamRevision(s)).toBe(1n);
      });

      it("streamRevision reports 'no_stream' for a stream without events", async () => {
        expect(await store.streamRevision(stream())).toBe('no_stream');
      });

      it('streamRevisionAndHead gives the revision and the head, as the two separate reads would', async () => {
        const a = stream();
        expect(await store.streamRevisionAndHead(a)).toEqual({
          revision: 'no_stream',
          head: await store.headPosition(),
        });
        await store.appendToStream(a, [ev('A1'), ev('A2')], { expectedState: 'no_stream' });
        const last = (await store.appendToStream(stream(), [ev('B1')], { expectedState: 'any' })).position;
        expect(await store.streamRevisionAndHead(a)).toEqual({ revision: 1n, head: await store.headPosition() });
        expect((await store.streamRevisionAndHead(a)).head).toBeGreaterThanOrEqual(last);
      });

      it('gives strictly increasing positions in commit order across streams, up to the head', async () => {
        const a = stream();
        const b = stream();
        const p1 = (await store.appendToStream(a, [ev('A1')], { expectedState: 'any' })).position;
        const p2 = (await store.appendToStream(b, [ev('B1')], { expectedState: 'any' })).position;
        const p3 = (await store.appendToStream(a, [ev('A2')], { expectedState: 'any' })).position;
        expect(p1).toBeLessThan(p2);
        expect(p2).toBeLessThan(p3);
        expect(await store.headPosition()).toBeGreaterThanOrEqual(p3);
      });

      it('keeps a given event id and generates a UUID otherwise', async () => {
        const s = stream();
        const id = randomUUID();
        await store.appendToStream(s, [ev('A', {}, { id }), ev('B')], { expectedState: 'no_stream' });
        const [a, b] = await collect(store.readStream(s));
        expect(a.id).toBe(id);
        expect(b.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
        expect(b.id).not.toBe(id);
      });

      it('round-trips data and the full metadata', async () => {
        const s = stream();
        const data = { name: 'Ünïcode ✓', nested: { list: [1, 2.5, null, 'x'], flag: false }, empty: {} };
        const metadata: EventMetadata = {
          userId: 'user-1',
          requestId: 'req-42',
          correlationId: randomUUID(),
          causationId: randomUUID(),
          at: '2024-05-06T07:08:09.123Z',
        };
        const nulls: EventMetadata = {
          userId: null,
          requestId: null,
          correlationId: null,
          causationId: null,
          at: '2024-05-06T07:08:10.000Z',
        };
        await store.appendToStream(
          s,
          [
            { type: 'Full', data, metadata },
            { type: 'Nulls', data: [], metadata: nulls },
          ],
          { expectedState: 'no_stream' },
        );
        const [full, withNulls] = await collect(store.readStream(s));
        expect(full.data).toEqual(data);
        expect(full.metadata).toEqual(metadata);
        expect(withNulls.data).toEqual([]);
        expect(withNulls.metadata).toEqual(nulls);
        expect(full.streamId).toBe(s);
      });
    });

    describe('readStream', () => {
      let s: string;
      beforeAll(async () => {
        s = stream();
        await store.appendToStream(
          s,
          [0, 1, 2, 3, 4].map((i) => ev(`E${i}`, { i })),
          { expectedState: 'no_stream' },
        );
      });
      const types = async (options?: Parameters<EventStore['readStream']>[1]) =>
        (await collect(store.readStream(s, options))).map((e) => e.type);

      it('reads forwards by default', async () => {
        expect(await types()).toEqual(['E0', 'E1', 'E2', 'E3', 'E4']);
      });
      it('reads backwards', async () => {
        expect(await types({ direction: 'backwards' })).toEqual(['E4', 'E3', 'E2', 'E1', 'E0']);
      });
      it('starts at fromRevision, inclusive, in either direction', async () => {
        expect(await types({ fromRevision: 2n })).toEqual(['E2', 'E3', 'E4']);
        expect(await types({ direction: 'backwards', fromRevision: 2n })).toEqual(['E2', 'E1', 'E0']);
      });
      it('stops after maxCount', async () => {
        expect(await types({ maxCount: 2 })).toEqual(['E0', 'E1']);
        expect(await types({ direction: 'backwards', maxCount: 2 })).toEqual(['E4', 'E3']);
        expect(await types({ fromRevision: 1n, maxCount: 3 })).toEqual(['E1', 'E2', 'E3']);
      });
      it('yields nothing when fromRevision is past the end of an existing stream', async () => {
        expect(await types({ fromRevision: 99n })).toEqual([]);
      });
      it('throws StreamNotFoundError for a stream without events', async () => {
        const missing = stream();
        const err = await rejection(collect(store.readStream(missing)));
        expect(err).toBeInstanceOf(StreamNotFoundError);
        expect((err as StreamNotFoundError).streamId).toBe(missing);
        expect(await rejection(collect(store.readStream(missing, { direction: 'backwards' })))).toBeInstanceOf(
          StreamNotFoundError,
        );
      });
      it('reads long streams completely and in order', async () => {
        const long = stream();
        const n = 1234;
        await store.appendToStream(
          long,
          range(n).map((i) => ev('N', { i })),
          { expectedState: 'no_stream' },
        );
        const fwd = await collect(store.readStream(long));
        expect(fwd.map((e) => (e.data as { i: number }).i)).toEqual(range(n));
        expect(fwd.map((e) => e.revision)).toEqual(range(n).map(BigInt));
        const bwd = await collect(store.readStream(long, { direction: 'backwards', fromRevision: 1000n }));
        expect(bwd.map((e) => e.revision)).toEqual(range(1001).reverse().map(BigInt));
      });
    });

    describe('readAll', () => {
      let cat: string;
      let written: RecordedEvent[];
      beforeAll(async () => {
        cat = category();
        await store.appendToStream(`${cat}a-1`, [ev('A1')], { expectedState: 'no_stream' });
        await store.appendToStream(`${cat}b-1`, [ev('B1')], { expectedState: 'no_stream' });
        await store.appendToStream(`${cat}a-2`, [ev('A2')], { expectedState: 'no_stream' });
        await store.appendToStream(`${cat}a-1`, [ev('A3')], { expectedState: 0n });
        await store.appendToStream(`${cat}bb-1`, [ev('BB1')], { expectedState: 'no_stream' });
        written = await collect(store.readAll({ streamPrefixes: [cat] }));
      });

      it('reads forwards in position order', async () => {
        expect(written.map((e) => e.type)).toEqual(['A1', 'B1', 'A2', 'A3', 'BB1']);
        expectStrictlyIncreasing(written.map((e) => e.position));
        expect(written[3]).toMatchObject({ streamId: `${cat}a-1`, revision: 1n, type: 'A3' });
      });
      it('reads backwards', async () => {
        const types = (await collect(store.readAll({ direction: 'backwards', streamPrefixes: [cat] }))).map(
          (e) => e.type,
        );
        expect(types).toEqual(['BB1', 'A3', 'A2', 'B1', 'A1']);
      });
      it('treats fromPosition as exclusive in either direction', async () => {
        const at = written[1].position;
        const fwd = await collect(store.readAll({ fromPosition: at, streamPrefixes: [cat] }));
        expect(fwd.map((e) => e.type)).toEqual(['A2', 'A3', 'BB1']);
        const bwd = await collect(store.readAll({ direction: 'backwards', fromPosition: at, streamPrefixes: [cat] }));
        expect(bwd.map((e) => e.type)).toEqual(['A1']);
      });
      it('stops after maxCount', async () => {
        const fwd = await collect(store.readAll({ maxCount: 2, streamPrefixes: [cat] }));
        expect(fwd.map((e) => e.type)).toEqual(['A1', 'B1']);
        const bwd = await collect(store.readAll({ direction: 'backwards', maxCount: 2, streamPrefixes: [cat] }));
        expect(bwd.map((e) => e.type)).toEqual(['BB1', 'A3']);
      });
      it('filters by stream prefix, with several prefixes combined', async () => {
        const a = await collect(store.readAll({ streamPrefixes: [`${cat}a-`] }));
        expect(a.map((e) => e.type)).toEqual(['A1', 'A2', 'A3']);
        const b = await collect(store.readAll({ streamPrefixes: [`${cat}b-`] }));
        expect(b.map((e) => e.type)).toEqual(['B1']);
        const ab = await collect(store.readAll({ streamPrefixes: [`${cat}b-`, `${cat}a-2`] }));
        expect(ab.map((e) => e.type)).toEqual(['B1', 'A2']);
      });
      it('reads everything after a position without a filter', async () => {
        // The event before ours, wherever it is: a read starts only at a position the store gave (KurrentDB refuses
        // any other), so it is read, not computed.
        let from = 0n;
        for await (const e of store.readAll({ direction: 'backwards', fromPosition: written[0].position, maxCount: 1 }))
          from = e.position;
        const all = await collect(store.readAll({ fromPosition: from, maxCount: 1000 }));
        const ours = all.filter((e) => e.streamId.startsWith(cat));
        expect(ours.map((e) => e.type)).toEqual(['A1', 'B1', 'A2', 'A3', 'BB1']);
        expectStrictlyIncreasing(all.map((e) => e.position));
      });
      it('pages through long logs in order', async () => {
        const big = category();
        for (let i = 0; i < 3; i++) {
          await store.appendToStreams(
            range(3).map((j) => ({
              streamId: `${big}-${j}`,
              expectedState: 'any' as const,
              events: range(250).map((k) => ev('P', { i, j, k })),
            })),
          );
        }
        const fwd = await collect(store.readAll({ streamPrefixes: [big] }));
        expect(fwd).toHaveLength(2250);
        expectStrictlyIncreasing(fwd.map((e) => e.position));
        const bwd = await collect(store.readAll({ direction: 'backwards', streamPrefixes: [big] }));
        expect(bwd.map((e) => e.position)).toEqual(fwd.map((e) => e.position).reverse());
      });
    });

    describe('appendToStreams', () => {
      it('writes to several streams at once, with contiguous positions in the order given', async () => {
        const cat = category();
        await store.appendToStream(`${cat}-b`, [ev('B0')], { expectedState: 'no_stream' });
        const { position } = await store.appendToStreams([
          { streamId: `${cat}-a`, expectedState: 'no_stream', events: [ev('A0'), ev('A1')] },
          { streamId: `${cat}-b`, expectedState: 0n, events: [ev('B1')] },
          { streamId: `${cat}-c`, expectedState: 'any', events: [ev('C0')] },
        ]);
        const events = await collect(store.readAll({ streamPrefixes: [cat] }));
        expect(events.map((e) => `${e.type}@${e.revision}`)).toEqual(['B0@0', 'A0@0', 'A1@1', 'B1@1', 'C0@0']);
        const batch = events.slice(1);
        expectStrictlyIncreasing(batch.map((e) => e.position));
        expect(batch[batch.length - 1].position).toBe(position);
        expect(await store.streamRevision(`${cat}-a`)).toBe(1n);
        expect(await store.streamRevision(`${cat}-b`)).toBe(1n);
      });

      it('writes nothing when any one expectation fails', async () => {
        const cat = category();
        await store.appendToStream(`${cat}-b`, [ev('B0')], { expectedState: 'no_stream' });
        const err = await rejection(
          store.appendToStreams([
            { streamId: `${cat}-a`, expectedState: 'no_stream', events: [ev('A0')] },
            { streamId: `${cat}-b`, expectedState: 'no_stream', events: [ev('B1')] },
            { streamId: `${cat}-c`, expectedState: 'any', events: [ev('C0')] },
          ]),
        );
        expectWrongExpectedVersion(err, `${cat}-b`, 'no_stream', 0n);
        expect(await store.streamRevision(`${cat}-a`)).toBe('no_stream');
        expect(await store.streamRevision(`${cat}-b`)).toBe(0n);
        expect(await store.streamRevision(`${cat}-c`)).toBe('no_stream');
        expect((await collect(store.readAll({ streamPrefixes: [cat] }))).map((e) => e.type)).toEqual(['B0']);
      });

      it('rejects the same stream twice in one call and writes nothing', async () => {
        const cat = category();
        const err = await rejection(
          store.appendToStreams([
            { streamId: `${cat}-a`, expectedState: 'any', events: [ev('A0')] },
            { streamId: `${cat}-a`, expectedState: 'any', events: [ev('A1')] },
          ]),
        );
        expect(err).toBeInstanceOf(Error);
        expect(err).not.toBeInstanceOf(WrongExpectedVersionError);
        expect(await store.streamRevision(`${cat}-a`)).toBe('no_stream');
      });
    });

    describe('maximum append size', () => {
      const blob = (kib: number) => 'x'.repeat(kib * 1024);

      it('rejects an event over 1 MiB and writes nothing', async () => {
        const s = stream();
        const err = await rejection(
          store.appendToStream(s, [ev('Big', { blob: blob(1025) })], { expectedState: 'any' }),
        );
        expect(err).toBeInstanceOf(MaxAppendSizeExceededError);
        expect((err as MaxAppendSizeExceededError).maxSize).toBe(MAX_APPEND_SIZE);
        expect((err as MaxAppendSizeExceededError).size).toBeGreaterThan(MAX_APPEND_SIZE);
        expect(await store.streamRevision(s)).toBe('no_stream');
      });

      it('sums the events of one call, across streams', async () => {
        const s = stream();
        const three = [ev('P', { blob: blob(400) }), ev('P', { blob: blob(400) }), ev('P', { blob: blob(400) })];
        expect(await rejection(store.appendToStream(s, three, { expectedState: 'any' }))).toBeInstanceOf(
          MaxAppendSizeExceededError,
        );
        const t = stream();
        const err = await rejection(
          store.appendToStreams([
            { streamId: s, expectedState: 'any', events: three.slice(0, 2) },
            { streamId: t, expectedState: 'any', events: three.slice(2) },
          ]),
        );
        expect(err).toBeInstanceOf(MaxAppendSizeExceededError);
        expect(await store.streamRevision(s)).toBe('no_stream');
        expect(await store.streamRevision(t)).toBe('no_stream');
      });

      it('accepts appends comfortably under the limit', async () => {
        const s = stream();
        const two = [ev('P', { blob: blob(400) }), ev('P', { blob: blob(400) })];
        expect((await store.appendToStream(s, two, { expectedState: 'no_stream' })).nextExpectedRevision).toBe(1n);
        const [first] = await collect(store.readStream(s));
        expect((first.data as { blob: string }).blob).toHaveLength(400 * 1024);
      });
    });

    describe('subscribeToAll', () => {
      it('delivers catch-up events, one caught-up marker, then live events, in order', async () => {
        const cat = category();
        for (const t of ['C1', 'C2', 'C3']) await store.appendToStream(`${cat}-1`, [ev(t)], { expectedState: 'any' });
        const sub = store.subscribeToAll({ streamPrefixes: [cat] });
        let liveAppended = false;
        const items = await drain(sub, async (got) => {
          if (!liveAppended && got[got.length - 1].kind === 'caughtUp') {
            liveAppended = true;
            await store.appendToStream(`${cat}-2`, [ev('L1')], { expectedState: 'no_stream' });
            await store.appendToStream(`${cat}-1`, [ev('L2')], { expectedState: 2n });
          }
          return eventsOf(got).length === 5;
        });
        expect(shape(items)).toEqual(['C1', 'C2', 'C3', 'caughtUp', 'L1', 'L2']);
        const events = eventsOf(items);
        expectStrictlyIncreasing(events.map((e) => e.position));
        const caughtUp = items[3] as { kind: 'caughtUp'; position: bigint };
        expect(caughtUp.position).toBeGreaterThanOrEqual(events[2].position);
        expect(caughtUp.position).toBeLessThan(events[3].position);
        expect(events[4]).toMatchObject({ streamId: `${cat}-1`, revision: 3n, type: 'L2' });
      });

      it('signals caught-up at the head when there is nothing to catch up on', async () => {
        const cat = category();
        const head = await store.headPosition();
        const sub = store.subscribeToAll({ fromPosition: head, streamPrefixes: [cat] });
        const items = await drain(sub, async (got) => got.length === 1);
        expect(items).toEqual([{ kind: 'caughtUp', position: expect.any(BigInt) }]);
        expect((items[0] as { position: bigint }).position).toBeGreaterThanOrEqual(head);
      });

      it('resumes strictly after fromPosition', async () => {
        const cat = category();
        const s = `${cat}-1`;
        await store.appendToStream(
          s,
          range(6).map((i) => ev(`E${i}`)),
          { expectedState: 'no_stream' },
        );
        const events = await collect(store.readStream(s));
        const sub = store.subscribeToAll({ fromPosition: events[2].position, streamPrefixes: [cat] });
        const items = await drain(sub, async (got) => got.some((i) => i.kind === 'caughtUp'));
        expect(shape(items)).toEqual(['E3', 'E4', 'E5', 'caughtUp']);
      });

      it('applies the stream prefix filter to catch-up and live events', async () => {
        const cat = category();
        await store.appendToStream(`${cat}a-1`, [ev('A1')], { expectedState: 'any' });
        await store.appendToStream(`${cat}b-1`, [ev('B1')], { expectedState: 'any' });
        const sub = store.subscribeToAll({ streamPrefixes: [`${cat}a-`] });
        let live = false;
        const items = await drain(sub, async (got) => {
          if (!live && got[got.length - 1].kind === 'caughtUp') {
            live = true;
            await store.appendToStream(`${cat}b-1`, [ev('B2')], { expectedState: 'any' });
            await store.appendToStream(`${cat}a-1`, [ev('A2')], { expectedState: 'any' });
          }
          return eventsOf(got).length === 2;
        });
        expect(shape(items)).toEqual(['A1', 'caughtUp', 'A2']);
      });

      it('delivers appends that race with catch-up exactly once and in order', async () => {
        const cat = category();
        const initial = 1200;
        for (let i = 0; i < initial / 100; i++) {
          await store.appendToStream(
            `${cat}-${i % 3}`,
            range(100).map((k) => ev('Pre', { i, k })),
            {
              expectedState: 'any',
            },
          );
        }
        const racing = 150;
        const appends: Promise<unknown>[] = [];
        let started = 0;
        const appendRacer = () =>
          appends.push(store.appendToStream(`${cat}-race`, [ev('Race', { n: started++ })], { expectedState: 'any' }));
        const sub = store.subscribeToAll({ streamPrefixes: [cat] });
        const items = await drain(
          sub,
          async (got) => {
            const last = got[got.length - 1];
            // While catching up, append (without waiting) every few items; the rest go in once caught up.
            if (last.kind === 'caughtUp') {
              appends.push(
                (async () => {
                  while (started < racing) {
                    appendRacer();
                    await sleep(started % 10 === 0 ? 5 : 0);
                  }
                })(),
              );
            } else if (started < racing / 2 && got.length % 10 === 0) {
              appendRacer();
            }
            return eventsOf(got).length === initial + racing;
          },
          15000,
        );
        await Promise.all(appends);
        const delivered = eventsOf(items);
        const logged = await collect(store.readAll({ streamPrefixes: [cat] }));
        expect(logged).toHaveLength(initial + racing);
        expect(delivered.map((e) => e.id)).toEqual(logged.map((e) => e.id));
        expectStrictlyIncreasing(delivered.map((e) => e.position));
        expect(items.filter((i) => i.kind === 'caughtUp')).toHaveLength(1);
        const caughtUpAt = items.findIndex((i) => i.kind === 'caughtUp');
        expect(caughtUpAt).toBeGreaterThanOrEqual(initial);
        expect(eventsOf(items.slice(0, caughtUpAt)).filter((e) => e.type === 'Pre')).toHaveLength(initial);
        expect(delivered.filter((e) => e.type === 'Race').map((e) => (e.data as { n: number }).n)).toEqual(
          range(racing),
        );
      });

      it('unsubscribe ends an iterator that is waiting for live events', async () => {
        const cat = category();
        const sub = store.subscribeToAll({ fromPosition: await store.headPosition(), streamPrefixes: [cat] });
        const seen: SubscriptionItem[] = [];
        let caughtUp!: () => void;
        const reachedCaughtUp = new Promise<void>((resolve) => (caughtUp = resolve));
        const loop = (async () => {
          for await (const item of sub) {
            seen.push(item);
            if (item.kind === 'caughtUp') caughtUp();
          }
        })();
        await reachedCaughtUp;
        const started = Date.now();
        await sub.unsubscribe();
        await withTimeout(loop, 2000, 'iterator did not end after unsubscribe');
        expect(Date.now() - started).toBeLessThan(1000);
        expect(shape(seen)).toEqual(['caughtUp']);
        // Later appends are not delivered to an ended subscription, and a second unsubscribe is harmless.
        await store.appendToStream(`${cat}-1`, [ev('After')], { expectedState: 'any' });
        await sub.unsubscribe();
      });

      it('unsubscribe during catch-up stops delivery after the item in flight', async () => {
        const cat = category();
        await store.appendToStream(
          `${cat}-1`,
          range(20).map(() => ev('E')),
          { expectedState: 'no_stream' },
        );
        const sub = store.subscribeToAll({ streamPrefixes: [cat] });
        const seen: SubscriptionItem[] = [];
        await withTimeout(
          (async () => {
            for await (const item of sub) {
              seen.push(item);
              if (seen.length === 3) await sub.unsubscribe();
            }
          })(),
          2000,
          'iterator did not end after unsubscribe',
        );
        expect(seen).toHaveLength(3);
      });

      it('breaking out of for-await ends the subscription', async () => {
        const cat = category();
        await store.appendToStream(`${cat}-1`, [ev('E1'), ev('E2')], { expectedState: 'no_stream' });
        const sub = store.subscribeToAll({ streamPrefixes: [cat] });
        for await (const item of sub) {
          expect(item.kind).toBe('event');
          break;
        }
        await sub.unsubscribe();
      });

      it('dispose ends live subscriptions', async () => {
        const { store: own, cleanup: ownCleanup } = await makeStore();
        try {
          const sub = own.subscribeToAll({ fromPosition: await own.headPosition(), streamPrefixes: [category()] });
          const loop = (async () => {
            const seen: SubscriptionItem[] = [];
            for await (const item of sub) seen.push(item);
            return seen;
          })();
          await sleep(50);
          await own.dispose();
          expect(shape(await withTimeout(loop, 2000, 'subscription survived dispose'))).toEqual(['caughtUp']);
        } finally {
          await ownCleanup();
        }
      });
    });

    describe('concurrency', () => {
      it('lets exactly one of several appends with the same expected revision win', async () => {
        const s = stream();
        await store.appendToStream(s, [ev('Start')], { expectedState: 'no_stream' });
        const results = await Promise.allSettled(
          range(10).map((i) => store.appendToStream(s, [ev('Try', { i })], { expectedState: 0n })),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        for (const r of lost) expectWrongExpectedVersion(r.reason, s, 0n, 1n);
        expect(await store.streamRevision(s)).toBe(1n);
      });

      it("lets exactly one of several 'no_stream' appends create the stream", async () => {
        const s = stream();
        const results = await Promise.allSettled(
          range(10).map((i) => store.appendToStream(s, [ev('Create', { i })], { expectedState: 'no_stream' })),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect((await collect(store.readStream(s))).map((e) => e.revision)).toEqual([0n]);
      });
    });
  });
}

// ---- helpers --------------------------------------------------------------------------------------------------

/** A fresh category name, unique per call (so tests never see each other's events). */
function category(): string {
  return `ct${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

function stream(): string {
  return `${category()}-${randomUUID()}`;
}

function ev(type: string, data: unknown = {}, extra: Partial<NewEvent> = {}): NewEvent {
  return {
    type,
    data,
    metadata: { userId: 'u1', requestId: 'r1', correlationId: 'c1', causationId: null, at: new Date().toISOString() },
    ...extra,
  };
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the operation to fail, but it succeeded');
}

function expectWrongExpectedVersion(err: unknown, streamId: string, expected: unknown, actual: unknown): void {
  expect(err).toBeInstanceOf(WrongExpectedVersionError);
  const e = err as WrongExpectedVersionError;
  expect(e.name).toBe('WrongExpectedVersionError');
  expect({ streamId: e.streamId, expected: e.expected, actual: e.actual }).toEqual({ streamId, expected, actual });
}

function expectStrictlyIncreasing(values: bigint[]): void {
  for (let i = 1; i < values.length; i++) {
    if (!(values[i] > values[i - 1])) {
      throw new Error(`not strictly increasing at ${i}: ${values[i - 1]} then ${values[i]}`);
    }
  }
}

function eventsOf(items: SubscriptionItem[]): RecordedEvent[] {
  return items.flatMap((i) => (i.kind === 'event' ? [i.event] : []));
}

function shape(items: SubscriptionItem[]): string[] {
  return items.map((i) => (i.kind === 'event' ? i.event.type : i.kind));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Iterates a subscription, calling `onItem` after each item until it returns true, then unsubscribes.
 * Fails (with what arrived so far) after `timeoutMs`.
 */
async function drain(
  sub: Subscription,
  onItem: (items: SubscriptionItem[]) => Promise<boolean>,
  timeoutMs = 5000,
): Promise<SubscriptionItem[]> {
  const items: SubscriptionItem[] = [];
  // Set inside the loop while the code below awaits it (an object, so the check at the end is not narrowed away).
  const outcome = { finished: false };
  const loop = (async () => {
    for await (const item of sub) {
      items.push(item);
      if (await onItem(items)) {
        outcome.finished = true;
        break;
      }
    }
  })();
  try {
    await withTimeout(loop, timeoutMs, 'subscription timed out');
  } catch (err) {
    throw new Error(`${(err as Error).message} after ${items.length} items: ${shape(items).slice(-10).join(', ')}`, {
      cause: err,
    });
  } finally {
    await sub.unsubscribe();
  }
  if (!outcome.finished) throw new Error(`subscription ended early after ${items.length} items`);
  return items;
}
