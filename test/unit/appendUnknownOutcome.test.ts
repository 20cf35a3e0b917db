import { DeadlineExceededError as ClientDeadlineExceededError } from '@kurrent/kurrentdb-client';
import { CommandRunner } from '../../src/commands/commandRunner';
import { commandEventId } from '../../src/commands/eventIds';
import type { Projector } from '../../src/projections/projector';
import type { EventMetadata, StreamAppend } from '../../src/ports/eventStore';
import { KurrentDbEventStore, type KurrentClient } from '../../src/infra/eventstore/kurrentdb/kurrentdbEventStore';
import { FakeClient } from '../support/kurrentdbFakeClient';

/**
 * Appends whose outcome is unknown (issue 32): the KurrentDB client's deadline passed, or the node stopped being the
 * leader, after the server had written the events. The command must answer as recorded, and the log hold its events
 * once: the retry sends the very same events (ids fixed by the command), and finds them where the append put them.
 */

const meta: EventMetadata = {
  userId: 'u1',
  requestId: 'r1',
  correlationId: 'r1',
  causationId: null,
  at: '2026-01-01T00:00:00.000Z',
};

/** The projector a command waits on: the read models are never behind here. */
const upToDate = { waitFor: async () => undefined } as unknown as Projector;

function storeOver(client: FakeClient): KurrentDbEventStore {
  return new KurrentDbEventStore(client as unknown as KurrentClient, {
    streamPrefixes: ['folder-', 'name-'],
    appendRetry: { retries: 2, delayMs: 1 },
  });
}

/** A command creating folder `id` with its name reservation: both streams expected not to exist yet. */
function createFolder(store: KurrentDbEventStore, id: string): Promise<string> {
  return new CommandRunner(store, upToDate).run(async () => {
    const appends: StreamAppend[] = [
      {
        streamId: `folder-${id}`,
        expectedState: 'no_stream',
        events: [{ type: 'FolderCreated', data: {}, metadata: meta }],
      },
      {
        streamId: `name-${id}`,
        expectedState: 'no_stream',
        events: [{ type: 'NameReserved', data: {}, metadata: meta }],
      },
    ];
    return { appends, result: id };
  });
}

describe('event ids fixed by the command', () => {
  it('are UUIDs (version 8) that depend on the command, the attempt and the index alone', () => {
    const id = commandEventId('c-1', 1, 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(commandEventId('c-1', 1, 0)).toBe(id);
    expect(
      new Set([id, commandEventId('c-1', 1, 1), commandEventId('c-1', 2, 0), commandEventId('c-2', 1, 0)]).size,
    ).toBe(4);
  });
});

describe('a command whose append committed and then timed out', () => {
  it('answers success, and the log holds its events once, with the ids its retry sent again', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    client.commitThenTimeout = 1;
    const store = storeOver(client);

    await expect(createFolder(store, 'a')).resolves.toBe('a');

    expect(client.log.map((e) => [e.streamId, e.type])).toEqual([
      ['folder-a', 'FolderCreated'],
      ['name-a', 'NameReserved'],
    ]);
    expect(client.multiCalls).toHaveLength(2);
    const sent = (call: unknown) => (call as { events: { id: string }[] }[]).flatMap((r) => r.events.map((e) => e.id));
    expect(sent(client.multiCalls[1])).toEqual(sent(client.multiCalls[0]));
    expect(client.log.map((e) => e.id)).toEqual(sent(client.multiCalls[0]));
  });

  it('answers success when another writer appended to its stream before the retry (found after the expected revision)', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    client.commitThenTimeout = 1;
    // Another process appends to the new folder as soon as it exists, before our timed-out append is retried: the
    // retry then meets a wrong expected version, and the events are no longer the stream's last ones.
    client.afterCommit = () => {
      client.afterCommit = undefined;
      client.add('folder-a', 'FolderRenamed');
    };
    const store = storeOver(client);

    await expect(createFolder(store, 'a')).resolves.toBe('a');

    expect(client.log.map((e) => [e.streamId, e.type])).toEqual([
      ['folder-a', 'FolderCreated'],
      ['name-a', 'NameReserved'],
      ['folder-a', 'FolderRenamed'],
    ]);
  });

  it('fails (nothing written twice) when every retry times out before the server wrote anything', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    client.failBeforeWriting = [1, 2, 3].map(() => new ClientDeadlineExceededError());
    const store = storeOver(client);

    await expect(createFolder(store, 'a')).rejects.toBeInstanceOf(ClientDeadlineExceededError);
    expect(client.log).toEqual([]);
    expect(client.multiCalls).toHaveLength(3);
  });
});
