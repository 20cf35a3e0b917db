import type { ReadModelQueries, TokenDoc, UserDoc } from '../ports/readModel';
import { hashToken } from '../domain/token';

/** A bound on each map: past it the map starts afresh (a flood of made-up tokens cannot grow memory). */
const MAX_ENTRIES = 10_000;

/**
 * The tokens and users this process resolved callers with, kept while the read model's accounts version is unchanged.
 * The adapter bumps that version in the very transaction that changes a user, a token or a group membership, in
 * whichever process projects it, so a cached caller is exactly what a fresh read would give: a revoked token, a
 * disabled user or a new admin counts on the next request everywhere. A request then skips hashing its token and two
 * or three lookups (~10 % of a `GET /folder/:id`'s CPU), and reads the version once for its token and user. Expiry
 * is not cached: callers check it on every request. Where the adapter keeps no version (MongoDB), every call reads
 * through.
 *
 * Cached documents are frozen: they are shared by every request of that caller, so none may change them.
 */
export class AccountCache {
  private version: number | undefined;
  private readonly tokens = new Map<string, TokenDoc | null>();
  private readonly users = new Map<string, UserDoc | null>();

  constructor(private readonly readModel: ReadModelQueries) {}

  /** The stored token whose raw value a client presented (found by its hash), or null; expiry is the caller's. */
  async token(presented: string): Promise<TokenDoc | null> {
    return this.cachedToken(this.currentVersion(), presented);
  }

  /**
   * The presented token (as {@link token}) and the user it belongs to (null without a token), both as of one read of
   * the version: a request's caller costs one SQLite read transaction when cached, not one per document.
   */
  async caller(presented: string): Promise<{ token: TokenDoc | null; user: UserDoc | null }> {
    const version = this.currentVersion();
    const token = await this.cachedToken(version, presented);
    const userId = token?.userId;
    // An anonymous session token belongs to nobody.
    if (!token || userId === undefined) return { token, user: null };
    const user = await this.cached(version, this.users, userId, () => this.readModel.users.get(userId));
    return { token, user };
  }

  private cachedToken(version: number | undefined, presented: string): Promise<TokenDoc | null> {
    return this.cached(version, this.tokens, presented, () => this.readModel.tokens.get(hashToken(presented)));
  }

  /** `map`'s entry for `key` while the version is still `version`; else (or undefined: none kept) `read()`. */
  private async cached<T extends object>(
    version: number | undefined,
    map: Map<string, T | null>,
    key: string,
    read: () => Promise<T | null>,
  ): Promise<T | null> {
    if (version === undefined) return read();
    const hit = this.version === version ? map.get(key) : undefined;
    if (hit !== undefined) return hit;
    const doc = await read();
    // Read after the version: if a change committed in between, the entry is newer than its version, and the next
    // request's version read drops it. Stored only if no other request moved the cache to a newer version meanwhile.
    if (this.version === version) {
      if (map.size >= MAX_ENTRIES) map.clear();
      map.set(key, doc === null ? null : deepFreeze(doc));
    }
    return doc;
  }

  /** Reads the version and forgets everything when it moved; undefined when the adapter keeps none. */
  private currentVersion(): number | undefined {
    const version = this.readModel.accountsVersion?.();
    if (version !== this.version) {
      this.version = version;
      this.tokens.clear();
      this.users.clear();
    }
    return version;
  }
}

function deepFreeze<T extends object>(value: T): T {
  for (const field of Object.values(value)) {
    if (typeof field === 'object' && field !== null && !Object.isFrozen(field)) deepFreeze(field as object);
  }
  return Object.freeze(value);
}
