import type { Leases } from '../ports/readModel';
import { isHolderGone } from '../ports/holderIdentity';

/**
 * Takes lease `name` for `holderId` if it is free, expired or already `holderId`'s, or if its holder is known to be
 * gone ({@link isHolderGone}; `onGone` hears about it); resolves with whether `holderId` holds it now.
 */
export async function takeLease(
  leases: Leases,
  name: string,
  holderId: string,
  ttlMs: number,
  onGone?: (holder: string) => void,
): Promise<boolean> {
  if (await leases.acquire(name, holderId, ttlMs)) return true;
  const current = await leases.get(name);
  if (!current || current.holder === holderId || !isHolderGone(current.holder)) return false;
  onGone?.(current.holder);
  return leases.acquire(name, holderId, ttlMs, current.holder);
}
