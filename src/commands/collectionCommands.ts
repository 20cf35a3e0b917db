import type { CommandRunner } from './commandRunner';
import type { RequestMeta } from './requestMeta';
import { reclaimBlobs } from './blobReclaim';
import type { AccessList } from '../domain/access';
import type { Metadata } from '../domain/metadata';
import { collectionDecider, collectionStream } from '../domain/collection';
import { claimValue, collectionNameStream, releaseValue, reservationDecider } from '../domain/uniqueName';
import { RestError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import type { BlobDeps } from './writeDeps';

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
  return commands.handleGroup(meta, async (attempt) => {
    const reservation = await attempt.load(collectionNameStream(name), reservationDecider);
    const collection = attempt.create(collectionStream(collectionId), collectionDecider);
    collection.decide({
      type: 'CreateCollection',
      data: { collectionId, ...input, created, nameOwner: reservation.state.owner?.id ?? null },
    });
    reservation.decide(claimValue(name, 'collection', collectionId));
    return { append: [collection, reservation], result: collectionId };
  });
}

/** Renames and/or re-describes a collection; a rename claims the new name and releases the old one atomically. */
export async function updateCollection(
  commands: CommandRunner,
  collectionId: string,
  input: { name?: string; description?: string },
  meta: RequestMeta,
): Promise<void> {
  await commands.handleGroup(meta, async (attempt) => {
    const collection = await attempt.load(collectionStream(collectionId), collectionDecider);
    if (collection.state.status !== 'active') throw invalidId(collectionId);
    const oldName = collection.state.name;
    const newName = input.name?.trim();
    const renamed = newName !== undefined && newName !== oldName;
    const reservation = renamed ? await attempt.load(collectionNameStream(newName), reservationDecider) : null;
    collection.decide({
      type: 'UpdateCollection',
      data: { ...input, updated: girderTime(), nameOwner: reservation?.state.owner?.id ?? null },
    });
    if (!renamed || !reservation) return { append: [collection], result: undefined };
    const previous = await attempt.load(collectionNameStream(oldName), reservationDecider);
    reservation.decide(claimValue(newName, 'collection', collectionId));
    previous.decide(releaseValue(collectionId));
    return { append: [collection, reservation, previous], result: undefined };
  });
}

/** Replaces the ACL (and optionally `public` and `publicFlags`) of a collection. */
export async function setCollectionAccess(
  commands: CommandRunner,
  collectionId: string,
  input: { access: AccessList; public?: boolean; publicFlags?: string[] },
  meta: RequestMeta,
): Promise<void> {
  await commands.handle(collectionStream(collectionId), collectionDecider, meta, (collection) => {
    if (collection.state.status !== 'active') throw invalidId(collectionId);
    collection.decide({ type: 'SetCollectionAccess', data: input });
  });
}

/** `PUT /collection/:id/metadata` and `DELETE /collection/:id/metadata`: the change, decided on the stream. */
export async function changeCollectionMetadata(
  commands: CommandRunner,
  collectionId: string,
  change: { set: Metadata; allowNull: boolean } | { remove: string[] },
  meta: RequestMeta,
): Promise<void> {
  await commands.handle(collectionStream(collectionId), collectionDecider, meta, (collection) => {
    if (collection.state.status !== 'active') throw invalidId(collectionId);
    const now = girderTime();
    collection.decide(
      'set' in change
        ? { type: 'SetCollectionMetadata', data: { metadata: change.set, allowNull: change.allowNull, now } }
        : { type: 'DeleteCollectionMetadata', data: { fields: change.remove, now } },
    );
  });
}

/**
 * `DELETE /collection/:id`: the collection and everything under it (every folder, item and file) go in one
 * CollectionDeleted event, applied set-wise by the projection in one read-model transaction like a folder delete
 * (docs/subtree-operations.md), and its name is released in the same atomic append. The blob ids of every file under
 * the collection, as the read model stood right before, are collected in the attempt and the bytes nothing references
 * any more are reclaimed after the commit (a file added between that read and the commit is left to the startup sweep).
 */
export async function deleteCollection(deps: BlobDeps, collectionId: string, meta: RequestMeta): Promise<void> {
  const { commands } = deps;
  const blobIds = await commands.handleGroup(meta, async (attempt) => {
    const collection = await attempt.load(collectionStream(collectionId), collectionDecider);
    if (collection.state.status !== 'active') throw invalidId(collectionId);
    const held = collection.state.name;
    collection.decide({ type: 'DeleteCollection', data: {} });
    const name = await attempt.load(collectionNameStream(held), reservationDecider);
    name.decide(releaseValue(collectionId));
    // The read models reflect everything appended so far, so the files read below are the latest.
    await deps.projector.waitFor(await deps.eventStore.headPosition());
    return { append: [collection, name], result: await deps.readModel.files.blobIdsUnderRoot(collectionId) };
  });
  await reclaimBlobs(deps, blobIds);
}
