import type { UserDoc } from '../ports/readModel';
import type { Viewer } from '../domain/access';
import type { Paging } from '../domain/paging';
import { userView } from './views';
import { userFieldsSeenBy } from './sortableFields';
import type { ReadModelDeps } from './readDeps';

/** Read-side functions of the user routes (src/http/resources/user*.ts); they touch the read model's users only. */
type Deps = ReadModelDeps<'users'>;

/** A user by id (null when there is none, e.g. a signed link naming a removed user). */
export async function userById(deps: Deps, id: string): Promise<UserDoc | null> {
  return deps.readModel.users.get(id);
}

/** The account a login form names: by e-mail when the (lowercased) name holds an `@`, else by login (Girder's rule). */
export async function userByLoginOrEmail(deps: Deps, name: string): Promise<UserDoc | null> {
  return name.includes('@') ? deps.readModel.users.getByEmail(name) : deps.readModel.users.getByLogin(name);
}

/** The account registered with this (lowercased) e-mail address. */
export async function userByEmail(deps: Deps, email: string): Promise<UserDoc | null> {
  return deps.readModel.users.getByEmail(email);
}

/**
 * A user re-read after a write on their account (the command waited for the projection): missing means the read model
 * lost a write it acknowledged, a fault and not a client's error, so `what` ("registered", "updated") names the write.
 */
export async function userAfterWrite(deps: Deps, id: string, what: string): Promise<UserDoc> {
  const user = await deps.readModel.users.get(id);
  if (!user) throw new Error(`User ${id} was ${what} but is not in the read model.`);
  return user;
}

/** `GET /user`: one page of users, by text (an e-mail matches only for callers shown e-mails), filtered for `viewer`. */
export async function listUsers(
  deps: Deps,
  viewer: Viewer | null,
  input: { text?: string; paging: Paging },
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  const page = await deps.readModel.users.list({
    text: input.text,
    matchEmail: userFieldsSeenBy(viewer).has('email'),
    paging: input.paging,
  });
  return { rows: page.rows.map((u) => userView(u, viewer)), total: page.total };
}

/** `GET /user/details`: every user document is public (registration makes them so), so every user counts. */
export async function userCount(deps: Deps): Promise<number> {
  return deps.readModel.users.count();
}

/** `GET /user/:id/details`: how many of the user's top-level folders `viewer` may see. */
export async function userDetails(
  deps: ReadModelDeps<'folders'>,
  user: UserDoc,
  viewer: Viewer | null,
): Promise<{ nFolders: number }> {
  return { nFolders: await deps.readModel.folders.countChildren({ parentType: 'user', parentId: user._id, viewer }) };
}
