import fs from 'node:fs';
import path from 'node:path';
import {
  ANY,
  END,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  MaxAppendSizeExceededError as ClientMaxAppendSizeExceededError,
  StreamNotFoundError as ClientStreamNotFoundError,
  UnavailableError as ClientUnavailableError,
  NotLeaderError as ClientNotLeaderError,
  UnsupportedError as ClientUnsupportedError,
  WrongExpectedVersionError as ClientWrongExpectedVersionError,
  convertToCommandError,
  type AllStreamResolvedEvent,
  type EventData,
} from '@kurrent/kurrentdb-client';
import {
  MAX_APPEND_SIZE,
  MaxAppendSizeExceededError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type EventMetadata,
  type NewEvent,
  type SubscriptionItem,
} from '../../src/ports/eventStore';
import {
  KurrentDbUnsupportedError,
  commitPositionOf,
  decodeMetadata,
  encodeMetadata,
  fromClientCurrentState,
  fromClientStreamState,
  fromResolvedEvent,
  toBigInt,
  toClientStreamState,
  toEventData,
  toPortError,
} from '../../src/infra/eventstore/kurrentdb/mapping';
import {
  KurrentDbEventStore,
  backoffDelay,
  type KurrentClient,
} from '../../src/infra/eventstore/kurrentdb/kurrentdbEventStore';
import { SERVICE_STREAM_PREFIXES } from '../../src/infra/eventstore/kurrentdb/streamPrefixes';
import { FAKE_EVENT_METADATA, FakeClient, FakeSubscription, resolvedEvent } from '../support/kurrentdbFakeClient';

const meta: EventMetadata = FAKE_EVENT_METADATA;
const ev = (type: string, data: unknown = {}): NewEvent => ({ type, data, metadata: meta });

describe('KurrentDB mapping', () => {
  describe('toBigInt', () => {
    it('keeps bigints and converts numbers (older clients) and decimal strings (raw protobuf)', () => {
      expect(toBigInt(7n)).toBe(7n);
      expect(toBigInt(7)).toBe(7n);
      expect(toBigInt(0)).toBe(0n);
      expect(toBigInt(-1)).toBe(-1n);
      expect(toBigInt('18446744073709551615')).toBe(18446744073709551615n);
      expect(toBigInt(' 42 ')).toBe(42n);
    });
    it('refuses what is not an integer', () => {
      expect(() => toBigInt(1.5)).toThrow(RangeError);
      expect(() => toBigInt(Number.NaN)).toThrow(RangeError);
      expect(() => toBigInt(2 ** 60)).toThrow(RangeError);
      expect(() => toBigInt('12abc')).toThrow(RangeError);
    });
  });

  describe('expected state', () => {
    it('maps the port states to the client constants and back', () => {
      expect(toClientStreamState('no_stream')).toBe(NO_STREAM);
      expect(toClientStreamState('any')).toBe(ANY);
      expect(toClientStreamState('exists')).toBe(STREAM_EXISTS);
      expect(toClientStreamState(5n)).toBe(5n);
      for (const state of ['no_stream', 'any', 'exists', 0n, 12n] as const) {
        expect(fromClientStreamState(toClientStreamState(state))).toBe(state);
      }
    });
    it("reads the protocol's negative sentinels, as numbers or bigints", () => {
      expect(fromClientStreamState(-1n)).toBe('no_stream');
      expect(fromClientStreamState(-2)).toBe('any');
      expect(fromClientStreamState(-4n)).toBe('exists');
      expect(fromClientStreamState(3)).toBe(3n);
    });
    it("reports a missing stream's current state as 'no_stream'", () => {
      expect(fromClientCurrentState(NO_STREAM as never)).toBe('no_stream');
      expect(fromClientCurrentState(undefined)).toBe('no_stream');
      expect(fromClientCurrentState(-1n)).toBe('no_stream');
      expect(fromClientCurrentState(4)).toBe(4n);
      expect(fromClientCurrentState(4n)).toBe(4n);
    });
  });

  describe('events and metadata', () => {
    it('stores metadata as a JSON object of strings (null fields left out) and reads it back whole', () => {
      const full: EventMetadata = {
        userId: 'u',
        requestId: 'r',
        correlationId: 'c',
        causationId: 'x',
        at: '2024-01-01T00:00:00.000Z',
      };
      const nulls: EventMetadata = {
        userId: null,
        requestId: null,
        correlationId: null,
        causationId: null,
        at: '2024-01-01T00:00:00.000Z',
      };
      expect(encodeMetadata(nulls)).toEqual({ at: '2024-01-01T00:00:00.000Z' });
      expect(decodeMetadata(encodeMetadata(full))).toEqual(full);
      expect(decodeMetadata(encodeMetadata(nulls))).toEqual(nulls);
      expect(() => encodeMetadata({ ...full, userId: 42 as never })).toThrow(TypeError);
    });
    it('falls back to the creation time for events written without our metadata', () => {
      const created = new Date('2023-03-04T05:06:07.000Z');
      expect(decodeMetadata(undefined, created)).toEqual({
        userId: null,
        requestId: null,
        correlationId: null,
        causationId: null,
        at: '2023-03-04T05:06:07.000Z',
      });
      expect(decodeMetadata(new Uint8Array([1, 2]), created).at).toBe('2023-03-04T05:06:07.000Z');
      expect(decodeMetadata({ ...encodeMetadata(meta), '$schema.name': 'T' })).toEqual(meta);
    });
    it('builds JSON events, keeping given ids, and measures data plus metadata', () => {
      const id = '9f6e1c52-0d2c-4c5e-9b0f-6a8f0e8d1f11';
      const { events, size } = toEventData([
        { ...ev('A', { x: 'é' }), id },
        { ...ev('B'), data: undefined },
      ]);
      expect(events[0]).toMatchObject({ id, type: 'A', contentType: 'application/json', data: { x: 'é' } });
      expect(events[0].metadata).toEqual(encodeMetadata(meta));
      expect(events[1].id).toMatch(/^[0-9a-f-]{36}$/);
      expect(events[1].data).toBeNull();
      const metaBytes = Buffer.byteLength(JSON.stringify(encodeMetadata(meta)));
      expect(size).toBe(Buffer.byteLength('{"x":"é"}') + Buffer.byteLength('null') + 2 * metaBytes);
    });
    it('reads recorded events with bigint or number revisions and positions', () => {
      const asNumbers = resolvedEvent({ streamId: 'folder-1', revision: 3, position: 120 });
      const recorded = fromResolvedEvent(asNumbers)!;
      expect(recorded).toMatchObject({ streamId: 'folder-1', revision: 3n, position: 120n, type: 'T', data: { n: 1 } });
      expect(recorded.metadata).toEqual(meta);
      expect(fromResolvedEvent(resolvedEvent({ streamId: 'folder-1', revision: 3n, position: 121n }))!.position).toBe(
        121n,
      );
      expect(fromResolvedEvent({ commitPosition: 5n })).toBeUndefined();
    });
    it('takes the commit position from the record, then the resolved event, else -1', () => {
      const noPosition = resolvedEvent({ streamId: 's-1', revision: 0n, position: undefined });
      expect(commitPositionOf(noPosition)).toBe(-1n);
      expect(commitPositionOf({ ...noPosition, commitPosition: 77n })).toBe(77n);
      const unset = resolvedEvent({ streamId: 's-1', revision: 0n, position: 0xffffffffffffffffn });
      expect(commitPositionOf(unset)).toBe(-1n);
    });
  });

  describe('errors', () => {
    it("maps the client's WrongExpectedVersionError with the state the caller asked for", () => {
      const clientError = new ClientWrongExpectedVersionError(undefined, {
        streamName: 'folder-1',
        expected: NO_STREAM,
        current: 4n,
      });
      const mapped = toPortError(clientError, { expected: new Map([['folder-1', 'no_stream' as const]]) });
      expect(mapped).toBeInstanceOf(WrongExpectedVersionError);
      expect(mapped).toMatchObject({ streamId: 'folder-1', expected: 'no_stream', actual: 4n });
    });
    it("reports 'no_stream' as the actual state of a missing stream", () => {
      const clientError = new ClientWrongExpectedVersionError(undefined, {
        streamName: 'folder-2',
        expected: STREAM_EXISTS,
        current: NO_STREAM,
      });
      expect(toPortError(clientError)).toMatchObject({ streamId: 'folder-2', expected: 'exists', actual: 'no_stream' });
      const fromV2 = ClientWrongExpectedVersionError.fromRevisionConflict({
        stream: 'item-1',
        expectedRevision: '0',
        actualRevision: '-1',
      });
      expect(toPortError(fromV2, { expected: new Map([['item-1', 0n]]) })).toMatchObject({
        streamId: 'item-1',
        expected: 0n,
        actual: 'no_stream',
      });
    });
    it('maps errors the client builds from raw server metadata (numbers as strings, negative sentinels)', () => {
      const metadata = {
        exception: 'wrong-expected-version',
        'stream-name': 'user-1',
        'expected-version': '-1',
        'actual-version': '2',
      };
      const serviceError = Object.assign(new Error('Wrong expected version'), {
        code: 9,
        details: 'Wrong expected version',
        metadata: { getMap: () => metadata },
      });
      const clientError = convertToCommandError(serviceError);
      expect(clientError).toBeInstanceOf(ClientWrongExpectedVersionError);
      const mapped = toPortError(clientError);
      expect(mapped).toBeInstanceOf(WrongExpectedVersionError);
      expect(mapped).toMatchObject({ streamId: 'user-1', expected: 'no_stream', actual: 2n });
    });
    it('maps StreamNotFoundError, size errors and unsupported features; passes the rest through', () => {
      const notFound = toPortError(new ClientStreamNotFoundError(undefined, 'folder-9'));
      expect(notFound).toBeInstanceOf(StreamNotFoundError);
      expect((notFound as StreamNotFoundError).streamId).toBe('folder-9');
      const tooBig = toPortError(ClientMaxAppendSizeExceededError.fromMaxAppendSize(MAX_APPEND_SIZE), {
        size: 2_000_000,
      });
      expect(tooBig).toBeInstanceOf(MaxAppendSizeExceededError);
      expect(tooBig).toMatchObject({ size: 2_000_000, maxSize: MAX_APPEND_SIZE });
      const unsupported = toPortError(new ClientUnsupportedError('multiStreamAppend', '25.1'));
      expect(unsupported).toBeInstanceOf(KurrentDbUnsupportedError);
      expect((unsupported as Error).message).toBe(
        'The KurrentDB server does not support multiStreamAppend: it needs KurrentDB 25.1 or later.',
      );
      const other = new ClientUnavailableError();
      expect(toPortError(other)).toBe(other);
    });
  });

  it('filters production subscriptions to every stream category the domain writes', () => {
    const domainDir = path.join(__dirname, '..', '..', 'src', 'domain');
    const categories = new Set<string>();
    for (const file of fs.readdirSync(domainDir)) {
      const source = fs.readFileSync(path.join(domainDir, file), 'utf8');
      for (const match of source.matchAll(/=>\s*`([a-z]+-)\$\{/g)) categories.add(match[1]);
    }
    expect(categories.size).toBeGreaterThan(5);
    for (const category of categories) expect(SERVICE_STREAM_PREFIXES).toContain(category);
  });

  it('backs off exponentially up to the ceiling', () => {
    const backoff = { initialMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5, 9].map((n) => backoffDelay(n, backoff))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

// ---- the adapter over a fake client ------------------------------------------------------------------------------

function storeOver(client: FakeClient, prefixes: string[] = ['folder-', 'item-']): KurrentDbEventStore {
  return new KurrentDbEventStore(client as unknown as KurrentClient, {
    streamPrefixes: prefixes,
    backoff: { initialMs: 100, maxMs: 1000 },
  });
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** Pulls items from a subscription in the background; `until(n)` waits for n items. */
function follow(iterable: AsyncIterable<SubscriptionItem>) {
  const items: SubscriptionItem[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const done = (async () => {
    for await (const item of iterable) {
      items.push(item);
      for (const w of [...waiters]) if (items.length >= w.n) w.resolve();
    }
  })();
  return {
    items,
    done,
    until: (n: number) =>
      new Promise<void>((resolve) => (items.length >= n ? resolve() : waiters.push({ n, resolve }))),
    shape: () =>
      items.map((i) => (i.kind === 'event' ? `${i.event.streamId}@${i.event.position}` : `caughtUp@${i.position}`)),
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

async function waitForSubscribe(client: FakeClient, n: number): Promise<FakeSubscription> {
  for (let i = 0; i < 200 && client.subscribeCalls.length < n; i++) await flush();
  const call = client.subscribeCalls.at(n - 1);
  if (!call) throw new Error(`subscribeToAll was called ${client.subscribeCalls.length} times, expected ${n}`);
  return call.sub;
}

describe('KurrentDbEventStore over a fake client', () => {
  describe('appending', () => {
    it('appends one stream with the mapped state and normalises revisions and positions to bigint', async () => {
      const client = new FakeClient();
      client.appendResult = {
        success: true,
        nextExpectedRevision: 4 as unknown as bigint,
        position: { commit: 900 as unknown as bigint, prepare: 900n },
      };
      const store = storeOver(client);
      const result = await store.appendToStream('folder-1', [ev('A')], { expectedState: 3n });
      expect(result).toEqual({ nextExpectedRevision: 4n, position: 900n });
      expect(client.appendCalls[0]).toMatchObject({ stream: 'folder-1', streamState: 3n });
      await store.appendToStream('folder-1', [ev('A')], { expectedState: 'exists' });
      expect(client.appendCalls[1].streamState).toBe(STREAM_EXISTS);
    });

    it("turns the client's conflict into the port's WrongExpectedVersionError", async () => {
      const client = new FakeClient();
      client.appendResult = new ClientWrongExpectedVersionError(undefined, {
        streamName: 'folder-1',
        expected: NO_STREAM,
        current: 0n,
      });
      const err = await rejection(
        storeOver(client).appendToStream('folder-1', [ev('A')], { expectedState: 'no_stream' }),
      );
      expect(err).toBeInstanceOf(WrongExpectedVersionError);
      expect(err).toMatchObject({ streamId: 'folder-1', expected: 'no_stream', actual: 0n });
    });

    it('checks an append without events against the stream without writing', async () => {
      const client = new FakeClient();
      const store = storeOver(client);
      expect(await store.appendToStream('folder-1', [], { expectedState: 'no_stream' })).toEqual({
        nextExpectedRevision: -1n,
        position: 0n,
      });
      client.add('folder-1');
      client.add('folder-1');
      expect(await store.appendToStream('folder-1', [], { expectedState: 1n })).toEqual({
        nextExpectedRevision: 1n,
        position: 200n,
      });
      const err = await rejection(store.appendToStream('folder-1', [], { expectedState: 'no_stream' }));
      expect(err).toMatchObject({ streamId: 'folder-1', expected: 'no_stream', actual: 1n });
      expect(client.appendCalls).toHaveLength(0);
    });

    it('rejects an append over 1 MiB before sending anything', async () => {
      const client = new FakeClient();
      const store = storeOver(client);
      const blob = 'x'.repeat(600 * 1024);
      const err = await rejection(
        store.appendToStreams([
          { streamId: 'folder-1', expectedState: 'any', events: [ev('A', { blob })] },
          { streamId: 'item-1', expectedState: 'any', events: [ev('B', { blob })] },
        ]),
      );
      expect(err).toBeInstanceOf(MaxAppendSizeExceededError);
      expect((err as MaxAppendSizeExceededError).size).toBeGreaterThan(MAX_APPEND_SIZE);
      expect(client.multiCalls).toHaveLength(0);
    });

    it('rejects the same stream twice in one call before sending anything', async () => {
      const client = new FakeClient();
      const err = await rejection(
        storeOver(client).appendToStreams([
          { streamId: 'folder-1', expectedState: 'any', events: [ev('A')] },
          { streamId: 'folder-1', expectedState: 'any', events: [ev('B')] },
        ]),
      );
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(WrongExpectedVersionError);
      expect(client.multiCalls).toHaveLength(0);
    });

    it('uses multiStreamAppend for several streams and the classic append for one', async () => {
      const client = new FakeClient();
      client.multiResult = { position: 5000, responses: [] };
      const store = storeOver(client);
      const result = await store.appendToStreams([
        { streamId: 'folder-1', expectedState: 'no_stream', events: [ev('A')] },
        { streamId: 'item-1', expectedState: 2n, events: [ev('B'), ev('C')] },
      ]);
      expect(result).toEqual({ position: 5000n });
      const [requests] = client.multiCalls as { streamName: string; expectedState: unknown; events: EventData[] }[][];
      expect(requests.map((r) => [r.streamName, r.expectedState, r.events.map((e) => e.type)])).toEqual([
        ['folder-1', NO_STREAM, ['A']],
        ['item-1', 2n, ['B', 'C']],
      ]);
      // Multi-stream append needs metadata of string values only.
      for (const e of requests.flatMap((r) => r.events)) {
        expect(Object.values(e.metadata as object).every((v) => typeof v === 'string')).toBe(true);
      }
      await store.appendToStreams([{ streamId: 'folder-2', expectedState: 'any', events: [ev('D')] }]);
      expect(client.multiCalls).toHaveLength(1);
      expect(client.appendCalls.map((c) => c.stream)).toEqual(['folder-2']);
    });

    it("maps a multi-stream conflict to the failing stream's expected and actual state", async () => {
      const client = new FakeClient();
      client.multiResult = ClientWrongExpectedVersionError.fromRevisionConflict({
        stream: 'item-1',
        expectedRevision: '-1',
        actualRevision: '0',
      });
      const err = await rejection(
        storeOver(client).appendToStreams([
          { streamId: 'folder-1', expectedState: 'any', events: [ev('A')] },
          { streamId: 'item-1', expectedState: 'no_stream', events: [ev('B')] },
        ]),
      );
      expect(err).toBeInstanceOf(WrongExpectedVersionError);
      expect(err).toMatchObject({ streamId: 'item-1', expected: 'no_stream', actual: 0n });
    });

    it('reports a server without multi-stream append clearly', async () => {
      const client = new FakeClient();
      client.multiResult = new ClientUnsupportedError('multiStreamAppend', '25.1');
      const err = await rejection(
        storeOver(client).appendToStreams([
          { streamId: 'folder-1', expectedState: 'any', events: [ev('A')] },
          { streamId: 'item-1', expectedState: 'any', events: [ev('B')] },
        ]),
      );
      expect(err).toBeInstanceOf(KurrentDbUnsupportedError);
    });
  });

  describe('reading', () => {
    it("maps a missing stream to the port's StreamNotFoundError and reports 'no_stream'", async () => {
      const store = storeOver(new FakeClient());
      const err = await rejection(collect(store.readStream('folder-404')));
      expect(err).toBeInstanceOf(StreamNotFoundError);
      expect((err as StreamNotFoundError).streamId).toBe('folder-404');
      expect(await store.streamRevision('folder-404')).toBe('no_stream');
    });

    it('passes other read failures through unchanged', async () => {
      const client = new FakeClient();
      client.readStreamError = new ClientUnavailableError();
      expect(await rejection(collect(storeOver(client).readStream('folder-1')))).toBe(client.readStreamError);
    });

    it('reads $all after fromPosition (exclusive) through the server-side prefix filter', async () => {
      const client = new FakeClient();
      const a = client.add('folder-1');
      client.add('other-1');
      const b = client.add('item-1');
      const c = client.add('folder-1');
      const store = storeOver(client);
      const after = await collect(store.readAll({ fromPosition: a.position, maxCount: 1 }));
      expect(after.map((e) => e.position)).toEqual([b.position]);
      const call = client.readAllCalls[client.readAllCalls.length - 1];
      expect(call.fromPosition).toEqual({ commit: a.position, prepare: a.position });
      expect(call.maxCount).toBe(2);
      expect(call.filter).toMatchObject({ filterOn: 'streamName', prefixes: ['folder-', 'item-'] });
      const back = await collect(store.readAll({ direction: 'backwards', fromPosition: c.position }));
      expect(back.map((e) => e.position)).toEqual([b.position, a.position]);
      const explicit = await collect(store.readAll({ streamPrefixes: ['other-'] }));
      expect(explicit.map((e) => e.streamId)).toEqual(['other-1']);
    });

    it('excludes system events when no prefixes apply, and reads the head under the default filter', async () => {
      const client = new FakeClient();
      const store = storeOver(client, []);
      expect(await store.headPosition()).toBe(0n);
      const mine = client.add('anything-1');
      client.add('$stats-127.0.0.1:2113', '$statsCollected');
      expect(await store.headPosition()).toBe(mine.position);
      expect(client.readAllCalls[client.readAllCalls.length - 1]).toMatchObject({
        direction: 'backwards',
        fromPosition: END,
        maxCount: 1,
        filter: { filterOn: 'eventType', regex: '^[^$].*' },
      });
    });
  });

  describe('subscribeToAll', () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    it("places the server's caught-up signal after the events still buffered when it arrived", async () => {
      const client = new FakeClient();
      const e1 = client.add('folder-1');
      const e2 = client.add('folder-2');
      client.add('folder-3');
      const store = storeOver(client);
      const sub = store.subscribeToAll({ streamPrefixes: ['folder-'] });
      const reader = follow(sub);
      const source = await waitForSubscribe(client, 1);
      // folder-3 was truncated away before the server read it, so only the server can say that catch-up ended; its
      // signal arrives while two events still wait in the stream's buffer.
      source.deliver(e1, e2);
      source.caughtUp(250n);
      await reader.until(3);
      await flush();
      expect(reader.shape()).toEqual(['folder-1@100', 'folder-2@200', 'caughtUp@300']);
      const live = client.add('folder-4');
      source.deliver(live);
      await reader.until(4);
      expect(reader.shape()).toEqual(['folder-1@100', 'folder-2@200', 'caughtUp@300', 'folder-4@400']);
      expect(client.subscribeCalls[0].fromPosition).toBe(START);
      expect(client.subscribeCalls[0].filter).toMatchObject({ filterOn: 'streamName', prefixes: ['folder-'] });
      await sub.unsubscribe();
      await reader.done;
      expect(source.unsubscribed).toHaveBeenCalled();
      await store.dispose();
    });

    it('signals caught-up by itself once the last event that existed at the start is delivered (older servers)', async () => {
      const client = new FakeClient();
      const e1 = client.add('folder-1');
      const e2 = client.add('folder-2');
      client.add('other-1');
      const store = storeOver(client);
      const sub = store.subscribeToAll({ fromPosition: 0n });
      const reader = follow(sub);
      const source = await waitForSubscribe(client, 1);
      source.deliver(e1, e2);
      await reader.until(3);
      // The marker's position is the head under the default filter at the start: past everything delivered.
      expect(reader.shape()).toEqual(['folder-1@100', 'folder-2@200', 'caughtUp@200']);
      const live = client.add('item-1');
      source.deliver(live);
      source.caughtUp(live.position); // a late server signal adds no second marker
      await reader.until(4);
      await flush();
      expect(reader.shape()).toEqual(['folder-1@100', 'folder-2@200', 'caughtUp@200', 'item-1@400']);
      await store.dispose();
      await reader.done;
      expect(client.dispose).toHaveBeenCalled();
    });

    it('signals caught-up at once when nothing is left to catch up on', async () => {
      const client = new FakeClient();
      client.add('folder-1');
      const store = storeOver(client);
      const sub = store.subscribeToAll({ fromPosition: 100n });
      const reader = follow(sub);
      await reader.until(1);
      expect(reader.shape()).toEqual(['caughtUp@100']);
      const source = await waitForSubscribe(client, 1);
      expect(client.subscribeCalls[0].fromPosition).toEqual({ commit: 100n, prepare: 100n });
      await sub.unsubscribe();
      await reader.done;
      expect(source.unsubscribed).toHaveBeenCalled();
    });

    it('resumes after a drop from the last delivered position, with exponential backoff, exactly once per event', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      const client = new FakeClient();
      const e1 = client.add('folder-1');
      const e2 = client.add('folder-2');
      const store = storeOver(client);
      const reader = follow(store.subscribeToAll());

      const first = await waitForSubscribe(client, 1);
      first.deliver(e1);
      await reader.until(1);
      first.disconnect();
      await flush();
      // Nothing is resubscribed before the first backoff step (100 ms) has passed.
      await jest.advanceTimersByTimeAsync(99);
      expect(client.subscribeCalls).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      const second = await waitForSubscribe(client, 2);
      expect(second).not.toBe(first);
      expect(client.subscribeCalls[1].fromPosition).toEqual({ commit: e1.position, prepare: e1.position });

      // The server repeats the event at the resume position: it is not delivered twice.
      second.deliver(e1, e2);
      await reader.until(3);
      expect(reader.shape()).toEqual(['folder-1@100', 'folder-2@200', 'caughtUp@200']);

      // Two drops in a row without progress: the second wait doubles (200 ms).
      second.disconnect();
      await flush();
      await jest.advanceTimersByTimeAsync(100);
      const third = await waitForSubscribe(client, 3);
      expect(client.subscribeCalls[2].fromPosition).toEqual({ commit: e2.position, prepare: e2.position });
      third.disconnect();
      await flush();
      await jest.advanceTimersByTimeAsync(199);
      expect(client.subscribeCalls).toHaveLength(3);
      await jest.advanceTimersByTimeAsync(1);
      const fourth = await waitForSubscribe(client, 4);
      const e3 = client.add('item-1');
      fourth.deliver(e3);
      await reader.until(4);
      expect(reader.shape()).toEqual(['folder-1@100', 'folder-2@200', 'caughtUp@200', 'item-1@300']);
      expect(reader.items.filter((i) => i.kind === 'caughtUp')).toHaveLength(1);

      await store.dispose();
      await reader.done;
    });

    it('ends during a backoff wait when unsubscribed, without waiting it out', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      const client = new FakeClient();
      const store = storeOver(client);
      const sub = store.subscribeToAll();
      const reader = follow(sub);
      await reader.until(1);
      (await waitForSubscribe(client, 1)).disconnect();
      await flush();
      await sub.unsubscribe();
      await reader.done;
      expect(jest.getTimerCount()).toBe(0);
      expect(client.subscribeCalls).toHaveLength(1);
      await store.dispose();
    });

    it('keeps retrying the start-up reads when the server is unreachable', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      const client = new FakeClient();
      const store = storeOver(client);
      const realReadAll = client.readAll.bind(client);
      let failures = 2;
      client.readAll = (options) => {
        if (failures > 0) {
          failures -= 1;
          return (async function* (): AsyncGenerator<AllStreamResolvedEvent> {
            throw new ClientUnavailableError();
          })();
        }
        return realReadAll(options);
      };
      const reader = follow(store.subscribeToAll());
      await flush();
      await jest.advanceTimersByTimeAsync(100);
      await jest.advanceTimersByTimeAsync(200);
      await reader.until(1);
      expect(reader.shape()).toEqual(['caughtUp@0']);
      await store.dispose();
      await reader.done;
    });
  });
});

describe('the fake client is as strict as KurrentDB, and the adapter holds', () => {
  const retrying = (client: FakeClient) =>
    new KurrentDbEventStore(client as unknown as KurrentClient, {
      streamPrefixes: ['folder-', 'item-'],
      backoff: { initialMs: 100, maxMs: 1000 },
      appendRetry: { retries: 2, delayMs: 1 },
    });
  const notLeader = () =>
    new ClientNotLeaderError({
      metadata: { 'leader-endpoint-host': 'node2', 'leader-endpoint-port': '2113' },
    } as never);

  it("refuses reads from a position that is no event's; the adapter reads from the ones events gave", async () => {
    const client = new FakeClient();
    client.add('folder-1');
    client.add('folder-1');
    client.add('item-1');
    const store = storeOver(client);
    expect(await rejection(collect(store.readAll({ fromPosition: 150n })))).toMatchObject({
      message: 'Invalid position 150/150: not the start of a record.',
    });
    expect((await collect(store.readAll({ fromPosition: 100n }))).map((e) => e.position)).toEqual([200n, 300n]);
    expect(
      (await collect(store.readAll({ direction: 'backwards', fromPosition: 300n }))).map((e) => e.position),
    ).toEqual([200n, 100n]);
  });

  it('fills in the positions a stream read left out, from $all filtered to exactly that stream', async () => {
    const client = new FakeClient();
    client.positionsInStreamReads = false;
    client.add('folder-1', 'A');
    client.add('folder-10', 'X'); // a stream whose name starts with the other's: not one of its events
    client.add('item-1', 'Y');
    client.add('folder-1', 'B');
    const store = storeOver(client);
    const events = await collect(store.readStream('folder-1'));
    expect(events.map((e) => [e.type, e.revision, e.position])).toEqual([
      ['A', 0n, 100n],
      ['B', 1n, 400n],
    ]);
    // One $all read for the stream, with the exact-name filter.
    expect(client.readAllCalls).toHaveLength(1);
    expect(client.readAllCalls[0].filter).toMatchObject({ regex: '^folder-1$' });
    client.add('folder-1', 'C');
    const [last] = await collect(store.readStream('folder-1', { direction: 'backwards', maxCount: 1 }));
    expect([last.type, last.position]).toEqual(['C', 500n]);
    // A reader that ignores positions (a command folding its stream) costs no $all read.
    const calls = client.readAllCalls.length;
    const folded = await collect(store.readStream('folder-1', { positions: false }));
    expect(folded.map((e) => [e.type, e.position])).toEqual([
      ['A', -1n],
      ['B', -1n],
      ['C', -1n],
    ]);
    expect(client.readAllCalls).toHaveLength(calls);
  });

  it('answers an append that committed and then timed out as recorded, after a retry that writes nothing twice', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    client.commitThenTimeout = 1;
    const store = retrying(client);
    const result = await store.appendToStream('folder-1', [ev('A'), ev('B')], { expectedState: 'no_stream' });
    expect(result).toEqual({ nextExpectedRevision: 1n, position: 200n });
    expect(client.log.map((e) => [e.streamId, e.type])).toEqual([
      ['folder-1', 'A'],
      ['folder-1', 'B'],
    ]);
    // The retry sent the same events (same ids), which the server recognised.
    expect(client.appendCalls).toHaveLength(2);
    expect(client.appendCalls[1].events.map((e) => e.id)).toEqual(client.appendCalls[0].events.map((e) => e.id));
  });

  it('retries a node that is no longer the leader or unavailable, and gives up after its retries', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    client.failBeforeWriting = [notLeader(), new ClientUnavailableError()];
    const store = retrying(client);
    expect(await store.appendToStream('folder-1', [ev('A')], { expectedState: 'any' })).toEqual({
      nextExpectedRevision: 0n,
      position: 100n,
    });
    expect(client.appendCalls).toHaveLength(3);
    client.failBeforeWriting = [1, 2, 3].map(() => new ClientUnavailableError());
    const error = await rejection(store.appendToStream('folder-1', [ev('B')], { expectedState: 0n }));
    expect(error).toBeInstanceOf(ClientUnavailableError);
    expect(client.log).toHaveLength(1);
    expect(client.appendCalls).toHaveLength(6);
  });

  it('does not retry a wrong expected version on the first attempt', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    client.add('folder-1');
    const store = retrying(client);
    const error = await rejection(store.appendToStream('folder-1', [ev('A')], { expectedState: 'no_stream' }));
    expect(error).toBeInstanceOf(WrongExpectedVersionError);
    expect(client.appendCalls).toHaveLength(1);
  });
});
