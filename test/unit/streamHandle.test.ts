import { CommandRunner } from '../../src/commands/commandRunner';
import { createGroup } from '../../src/commands/groupCommands';
import type { RequestMeta } from '../../src/commands/requestMeta';
import { folderTreeDecider } from '../../src/domain/folderTree';
import { groupDecider, groupStream } from '../../src/domain/group';
import { claimValue, groupNameStream, reservationDecider } from '../../src/domain/uniqueName';
import type { Projector } from '../../src/projections/projector';
import { KurrentDbEventStore, type KurrentClient } from '../../src/infra/eventstore/kurrentdb/kurrentdbEventStore';
import { FakeClient } from '../support/kurrentdbFakeClient';

/**
 * The stream handle (CommandRunner.handle / handleGroup): the events a command decides reach the log in the order
 * of its streams, each append expecting the revision read, with the request's metadata and ids fixed by the command;
 * a stream decided on but not listed for the append is a bug that writes nothing.
 */

const meta: RequestMeta = { requestId: 'r1', userId: 'u1', correlationId: 'c1', causationId: null };
const upToDate = { waitFor: async () => undefined } as unknown as Projector;

function runnerOver(client: FakeClient): CommandRunner {
  const store = new KurrentDbEventStore(client as unknown as KurrentClient, {
    streamPrefixes: ['group-', 'groupname-'],
    appendRetry: { retries: 0, delayMs: 1 },
  });
  return new CommandRunner(store, upToDate);
}

const input = { name: 'Team', description: '', public: false, creatorId: 'u1' };

describe('the stream handle', () => {
  it('appends the streams of a grouped decision in their order, with the request metadata and v8 ids', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    const commands = runnerOver(client);

    const groupId = await createGroup(commands, input, meta);

    expect(client.log.map((e) => [e.streamId, e.type])).toEqual([
      [groupStream(groupId), 'GroupCreated'],
      [groupStream(groupId), 'GroupMemberSet'],
      [groupNameStream('Team'), 'ValueClaimed'],
    ]);
    const ids = client.log.map((e) => e.id);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(3);
    const sent = client.multiCalls[0] as { expectedState: unknown; events: { metadata: unknown }[] }[];
    expect(sent.map((r) => r.expectedState)).toEqual(['no_stream', 'no_stream']);
    for (const { events } of sent) {
      for (const event of events) {
        expect(event.metadata).toMatchObject({ userId: 'u1', requestId: 'r1', correlationId: 'c1' });
      }
    }
  });

  it('expects the revision it read, and decides again on the new revision after a conflict', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    const commands = runnerOver(client);
    let attempts = 0;

    await commands.handle('group-tree', folderTreeDecider, meta, (tree) => {
      attempts += 1;
      // Another writer appends between this attempt's read and its append.
      if (attempts === 1) client.add('group-tree', 'FolderTreeChanged');
      tree.decide({ type: 'MarkFolderMoved', data: { folderId: 'f1', parentType: 'folder', parentId: 'p1' } });
    });

    expect(attempts).toBe(2);
    expect(client.log.map((e) => [e.streamId, e.revision])).toEqual([
      ['group-tree', 0n],
      ['group-tree', 1n],
    ]);
  });

  it('writes nothing when a stream was decided on but not listed for the append', async () => {
    const client = new FakeClient();
    client.recordAppends = true;
    const commands = runnerOver(client);

    const forgotten = commands.handleGroup(meta, async (attempt) => {
      const group = attempt.create(groupStream('g1'), groupDecider);
      group.decide({
        type: 'CreateGroup',
        data: { groupId: 'g1', ...input, created: '2024-01-01T00:00:00+00:00', nameOwner: null },
      });
      const name = await attempt.load(groupNameStream('Team'), reservationDecider);
      name.decide(claimValue('Team', 'group', 'g1'));
      return { append: [group], result: undefined };
    });

    await expect(forgotten).rejects.toThrow(`Events decided on ${groupNameStream('Team')} but not appended.`);
    expect(client.log).toEqual([]);
  });
});
