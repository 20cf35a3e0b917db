import type { DomainEvent } from './decider';
import type { AccessList } from './access';
import type { ParentType } from '../ports/readModel';

export const folderStream = (id: string): string => `folder-${id}`;

export interface FolderCreatedData {
  folderId: string;
  name: string;
  description: string;
  parentType: ParentType;
  parentId: string;
  creatorId: string | null;
  created: string;
  /** Absent for a folder created under a user without an explicit `public` (Girder stores no field then). */
  public?: boolean;
  access: AccessList;
  meta: Record<string, unknown>;
}

export type FolderEvent = DomainEvent<'FolderCreated', FolderCreatedData>;
