import type { z } from 'zod';
import type { Decider, DomainEvent } from './decider';
import { FolderTreeChangedSchema } from './folderEvents';

export type FolderTreeEvent = DomainEvent<'FolderTreeChanged', z.infer<typeof FolderTreeChangedSchema>>;

/** A folder moved: the marker every move appends to FOLDER_TREE_STREAM (./folderEvents.ts says why). */
export interface FolderTreeCommand {
  type: 'MarkFolderMoved';
  data: z.infer<typeof FolderTreeChangedSchema>;
}

/**
 * The folder-tree marker stream. Its events carry no state a decision needs: what matters is the stream's revision,
 * which every move appends against, so two concurrent moves conflict and the second checks for a cycle again against a
 * read model that shows the first. The move itself is decided on the folder's stream (MoveFolder).
 */
export const folderTreeDecider: Decider<Record<string, never>, FolderTreeCommand, FolderTreeEvent> = {
  initialState: () => ({}),
  // Nothing to fold: only the stream's revision serialises moves.
  evolve: (state) => state,
  decide: (command) => [{ type: 'FolderTreeChanged', data: command.data }],
  eventSchemas: { FolderTreeChanged: FolderTreeChangedSchema },
};
