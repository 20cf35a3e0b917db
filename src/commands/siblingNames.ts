import type { CommandRunner } from './commandRunner';
import type { AnyDecidedStream, CommandAttempt } from './streamHandle';
import { claimValue, reservationDecider, siblingNameStream } from '../domain/uniqueName';
import type { ParentType } from '../domain/parents';

/**
 * Sibling-name uniqueness (folders and items share one namespace per parent).
 *
 * The read model says whether a name is taken; the per-name reservation stream only serialises writers: every
 * writer that gives a child the name appends a claim with the stream's expected revision, so of two racing writers
 * one conflicts, retries, and then sees the winner. Before looking at the read model the writer waits until the
 * projector has applied everything committed so far, so the winner is visible on the retry.
 *
 * Keeping the truth in the read model (not in claim/release pairs) is what lets subtree operations (copy, delete,
 * empty) create and remove thousands of children in one event without appending a claim per child.
 */
export interface NameGuard {
  /** The kind of sibling already holding the name, or null when it is free. */
  takenBy: 'folder' | 'item' | null;
  /** The name's reservation stream with the claim decided on it, to append with the event that uses the name. */
  claim(attempt: CommandAttempt, ownerType: 'folder' | 'item', ownerId: string): AnyDecidedStream;
}

export type SiblingLookup = (
  parentType: ParentType,
  parentId: string,
  name: string,
) => Promise<'folder' | 'item' | null>;

export async function guardSiblingName(
  commands: CommandRunner,
  lookup: SiblingLookup,
  parentType: ParentType,
  parentId: string,
  name: string,
): Promise<NameGuard> {
  const streamId = siblingNameStream(parentId, name);
  // Only the stream's revision matters (the claim's expected state), not its events: one indexed lookup. Loading the
  // stream would read every claim, and throw (and catch) StreamNotFoundError for each new name.
  const { revision, head } = await commands.store.streamRevisionAndHead(streamId);
  await commands.projector.waitFor(head);
  const takenBy = await lookup(parentType, parentId, name);
  return {
    takenBy,
    claim: (attempt, ownerType, ownerId) => {
      const stream = attempt.at(streamId, reservationDecider, revision);
      stream.decide(claimValue(name, ownerType, ownerId));
      return stream;
    },
  };
}
