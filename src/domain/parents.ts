/** What a folder can sit under: another folder, or a root (a user or a collection). */
export const PARENT_TYPES = ['folder', 'user', 'collection'] as const;
export type ParentType = (typeof PARENT_TYPES)[number];
/** What a whole tree hangs from (a folder's `baseParentType`). */
export type RootType = Exclude<ParentType, 'folder'>;
