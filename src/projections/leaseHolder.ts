import type { Leases } from '../ports/readModel';
import { isHolderGone } from '../ports/holderIdentity';

/**
 * Takes lease `name` for `holderId` if it is free, expired or already `holderId`'s, or if its holder is known to be
 * gone ({@link isHolderGone}; `onGone` hears about it); resolves with whether `holderId` holds it now.
 *
 * A standby asks every few seconds, so it reads first and writes only when taking could succeed: on a SQLite file
 * shared by several processes, a write waits for the holder's write lock (a bulk transaction may hold it for
 * seconds), and would stall this process's event loop for nothing. The write stays the only authority; the read only
 * spares one that would be refused (a lease that expires just after it is taken at the next attempt).
 */
export async function takeLease(
  leases: Leases,
  name: string,
  holderId: string,
  ttlMs: number,
  onGone?: (holder: string) => void,
): Promise<boolean> {
  const held = await leases.get(name);
  const heldByAnother = held !== null && held.holder !== holderId && held.expiresAt.getTime() > Date.now();
  if (heldByAnother && !isHolderGone(held.holder)) return false;
  if (await leases.acquire(name, holderId, ttlMs)) return true;
  const current = await leases.get(name);
  if (!current || current.holder === holderId || !isHolderGone(current.holder)) return false;
  onGone?.(current.holder);
  return leases.acquire(name, holderId, ttlMs, current.holder);
}
