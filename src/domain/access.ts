import { z } from 'zod';

/** Access levels and ACL rules (Girder's AccessType and AccessControlledModel), pure functions only. */
export const AccessLevel = { NONE: -1, READ: 0, WRITE: 1, ADMIN: 2, SITE_ADMIN: 100 } as const;
export type Level = 0 | 1 | 2;
export type EffectiveLevel = -1 | 0 | 1 | 2;

export interface AccessEntry {
  id: string;
  level: Level;
  flags: string[];
}

export interface AccessList {
  users: AccessEntry[];
  groups: AccessEntry[];
}

export const emptyAccess = (): AccessList => ({ users: [], groups: [] });

const copyEntry = (entry: AccessEntry): AccessEntry => ({ ...entry, flags: [...entry.flags] });

/**
 * A copy of an ACL that shares nothing with it: what `structuredClone` gave, at 0.1 µs instead of 7 µs per ACL (it
 * runs on every folder creation, to pass the parent's ACL on, and on every folder decision).
 */
export const copyAccess = (access: AccessList): AccessList => ({
  users: access.users.map(copyEntry),
  groups: access.groups.map(copyEntry),
});

/** An ACL as events carry it (folder, collection and user events share it). */
const accessEntrySchema = z.object({
  id: z.string(),
  level: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  flags: z.array(z.string()),
});
export const accessListSchema = z.object({ users: z.array(accessEntrySchema), groups: z.array(accessEntrySchema) });

/** What an access check needs to know about the caller. */
export interface Viewer {
  id: string;
  admin: boolean;
  groups: string[];
}

export interface AccessControlled {
  public?: boolean;
  access: AccessList;
}

/** Girder's hasAccess: public grants READ to everyone; site admins pass; otherwise any matching entry. */
export function hasAccess(doc: AccessControlled, viewer: Viewer | null, level: Level): boolean {
  if (level <= AccessLevel.READ && doc.public === true) return true;
  if (!viewer) return false;
  if (viewer.admin) return true;
  return effectiveEntryLevel(doc, viewer) >= level;
}

function effectiveEntryLevel(doc: AccessControlled, viewer: Viewer): EffectiveLevel {
  let best: EffectiveLevel = -1;
  for (const entry of doc.access.users) if (entry.id === viewer.id && entry.level > best) best = entry.level;
  for (const entry of doc.access.groups) if (viewer.groups.includes(entry.id) && entry.level > best) best = entry.level;
  return best;
}

/**
 * Girder's getAccessLevel (the `_accessLevel` field): anonymous → READ if public else NONE; site admin → ADMIN;
 * otherwise the best matching entry. Public does not raise a logged-in user's level.
 */
export function accessLevelOf(doc: AccessControlled, viewer: Viewer | null): EffectiveLevel {
  if (!viewer) return doc.public === true ? 0 : -1;
  if (viewer.admin) return 2;
  return effectiveEntryLevel(doc, viewer);
}

/** Gives a user the level on an ACL, replacing an existing entry for them (Girder's setUserAccess). */
export function withUserAccess(access: AccessList, userId: string, level: Level): AccessList {
  const others = access.users.filter((entry) => entry.id !== userId);
  const existing = access.users.find((entry) => entry.id === userId);
  const users = existing
    ? access.users.map((entry) => (entry.id === userId ? { ...entry, level } : entry))
    : [...others, { id: userId, level, flags: [] }];
  return { users, groups: access.groups.map((g) => ({ ...g })) };
}

export const levelName = (level: Level): 'Read' | 'Write' | 'Admin' => (['Read', 'Write', 'Admin'] as const)[level];

/** `<Read|Write|Admin> access denied for <model> <id> (user <id|None>).` */
export function accessDeniedMessage(level: Level, model: string, id: string, viewer: Viewer | null): string {
  return `${levelName(level)} access denied for ${model} ${id} (user ${viewer ? viewer.id : 'None'}).`;
}
