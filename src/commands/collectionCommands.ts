import type { Services } from '../services';
import type { StreamAppend } from '../ports/eventStore';
import type { CommandRunner } from './commandRunner';
import { toNewEvents } from './commandRunner';
import type { RequestMeta } from './requestMeta';
import { reclaimBlobs } from './blobReclaim';
import type { AccessList } from '../domain/access';
import type { Metadata } from '../domain/metadata';
import { collectionDecider, collectionStream } from '../domain/collection';
import { decideOn } from '../domain/decider';
import { claim, collectionNameStream, release, reservationDecider } from '../domain/uniqueName';
import { RestError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';

const invalidId = (id: string) => new RestError(`Invalid collection id (${id}).`);

/**
 * Creates a collection. Its name is claimed on the `collectionname-<hash>` reservation stream in the same atomic
 * append as the CollectionCreated event, so concurrent creations with one name yield exactly one collection.
 */
export async function createCollection(
  commands: CommandRunner,
  input: { name: string; description: string; public: boolean; creatorId: string | null },
  meta: RequestMeta,
): Promise<string> {
  const collectionId = newId();
  const created = girderTime();
  const name = input.name.trim();
  return commands.run(async () => {
    const reservation = await commands.load(collectionNameStream(name), reservationDecider);
    const { events } = decideOn(collectionDecider, collectionDecider.initialState(), {
      type: 'CreateCollection',
      data: { collectionId, ...input, created, nameOwner: reservation.state.owner?.id ?? null },
    });
    return {
      appends: [
        { streamId: collectionStream(collectionId), expectedState: 'no_stream', events: toNewEvents(events, meta) },
        {
          streamId: collectionNameStream(name),
          expectedState: reservation.expected,
          events: toNewEvents([claim(name, 'collection', collectionId)], meta),
        },
      ],
      result: collectionId,
    };
  });
}

/** Renames and/or re-describes a collection; a rename claims the new name and releases the old one atomically. */
export async function updateCollection(
  commands: CommandRunner,
  collectionId: string,
  input: { name?: string; description?: string },
  meta: RequestMeta,
): Promise<void> {
  await commands.run(async () => {
    const stream = await commands.load(collectionStream(collectionId), collectionDecider);
    if (stream.state.status !== 'active') throw invalidId(collectionId);
    const oldName = stream.state.name;
    const newName = input.name?.trim();
    const renamed = newName !== undefined && newName !== oldName;
    const reservation = renamed ? await commands.load(collectionNameStream(newName), reservationDecider) : null;
    const { events } = decideOn(collectionDecider, stream.state, {
      type: 'UpdateCollection',
      data: { ...input, updated: girderTime(), nameOwner: reservation?.state.owner?.id ?? null },
    });
    const appends: StreamAppend[] = [
      { streamId: collectionStream(collectionId), expectedState: stream.expected, events: toNewEvents(events, meta) },
    ];
    if (renamed && reservation) {
      const previous = await commands.load(collectionNameStream(oldName), reservationDecider);
      appends.push(
        {
          streamId: collectionNameStream(newName),
          expectedState: reservation.expected,
          events: toNewEvents([claim(newName, 'collection', collectionId)], meta),
        },
        {
          streamId: collectionNameStream(oldName),
          expectedState: previous.expected,
          events: toNewEvents([release(collectionId)], meta),
        },
      );
    }
    return { appends, result: undefined };
  });
}

/** Replaces the ACL (and optionally `public` and `publicFlags`) of a collection. */
export async function setCollectionAccess(
  commands: CommandRunner,
  collectionId: string,
  input: { access: AccessList; public?: boolean; publicFlags?: string[] },
  meta: RequestMeta,
): Promise<void> {
  await commands.run(async () => {
    const stream = await commands.load(collectionStream(collectionId), collectionDecider);
    if (stream.state.status !== 'active') throw invalidId(collectionId);
    const { events } = decideOn(collectionDecider, stream.state, { type: 'SetCollectionAccess', data: input });
    return {
      appends: [
        { streamId: collectionStream(collectionId), expectedState: stream.expected, events: toNewEvents(events, meta) },
      ],
      result: undefined,
    };
  });
}

/** `PUT /collection/:id/metadata` and `DELETE /collection/:id/metadata`: the change, decided on the stream. */
export async function changeCollectionMetadata(
  commands: CommandRunner,
  collectionId: string,
  change: { set: Metadata; allowNull: boolean } | { remove: string[] },
  meta: RequestMeta,
): Promise<void> {
  await commands.run(async () => {
    const stream = await commands.load(collectionStream(collectionId), collectionDecider);
    if (stream.state.status !== 'active') throw invalidId(collectionId);
    const now = girderTime();
    const { events } = decideOn(
      collectionDecider,
      stream.state,
      'set' in change
        ? { type: 'SetCollectionMetadata', data: { metadata: change.set, allowNull: change.allowNull, now } }
        : { type: 'DeleteCollectionMetadata', data: { fields: change.remove, now } },
    );
    return {
      appends: [
        { streamId: collectionStream(collectionId), expectedState: stream.expected, events: toNewEvents(events, meta) },
      ],
      result: undefined,
    };
  });
}

/**
 * `DELETE /collection/:id`: the collection and everything under it (every folder, item and file) go in one
 * CollectionDeleted event, applied set-wise by the projection in one read-model transaction like a folder delete
 * (docs/subtree-operations.md), and its name is released in the same atomic append. The blob ids of every file under
 * the collection, as the read model stood right before, are collected in the attempt and the bytes nothing references
 * any more are reclaimed after the commit (a file added between that read and the commit is left to the startup sweep).
 */
export async function deleteCollection(services: Services, collectionId: string, meta: RequestMeta): Promise<void> {
  const { commands } = services;
  const blobIds = await commands.run(async () => {
    const stream = await commands.load(collectionStream(collectionId), collectionDecider);
    if (stream.state.status !== 'active') throw invalidId(collectionId);
    const { events } = decideOn(collectionDecider, stream.state, { type: 'DeleteCollection', data: {} });
    const name = await commands.load(collectionNameStream(stream.state.name), reservationDecider);
    // The read models reflect everything appended so far, so the files read below are the latest.
    await services.projector.waitFor(await services.eventStore.headPosition());
    return {
      appends: [
        { streamId: collectionStream(collectionId), expectedState: stream.expected, events: toNewEvents(events, meta) },
        {
          streamId: collectionNameStream(stream.state.name),
          expectedState: name.expected,
          events: toNewEvents([release(collectionId)], meta),
        },
      ],
      result: await services.readModel.files.blobIdsUnderRoot(collectionId),
    };
  });
  await reclaimBlobs(services, blobIds);
}
