import fs from 'node:fs';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Leases } from '../ports/readModel';

/**
 * Lease holder ids: `<hostname>:<pid>:<pid namespace>:<random>`. Besides naming the holder for operators, the id lets
 * a process on the same host and in the same pid namespace tell that a holder is gone (its process no longer exists),
 * so that a service restarted after `kill -9` takes its read model's projector lease over at once instead of waiting
 * for it to expire. Anywhere else (another host, another container, no /proc) nothing is concluded and the lease
 * simply expires.
 */

/** Holder ids of lease holders running in this process (an id with this pid but not listed is an earlier process). */
const running = new Set<string>();

let namespace: string | undefined;
function pidNamespace(): string {
  if (namespace === undefined) {
    try {
      namespace = /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1] ?? '';
    } catch {
      namespace = '';
    }
  }
  return namespace;
}

export function newHolderId(): string {
  return `${os.hostname()}:${process.pid}:${pidNamespace()}:${randomBytes(4).toString('hex')}`;
}

/** Marks `holderId` as running in this process (until {@link holderStopped}). */
export function holderStarted(holderId: string): void {
  running.add(holderId);
}

export function holderStopped(holderId: string): void {
  running.delete(holderId);
}

/**
 * Whether `holderId` is known to be gone: it ran on this host, in this pid namespace, and its process no longer
 * exists (or it is this process's pid but no holder of this process has that id: an earlier process with the same
 * pid). False whenever that cannot be known.
 */
export function isHolderGone(holderId: string): boolean {
  const match = /^(.+):(\d+):(\d*):([0-9a-f]+)$/.exec(holderId);
  if (!match) return false;
  const [, host, pidText, ns] = match;
  if (host !== os.hostname() || ns === '' || ns !== pidNamespace()) return false;
  const pid = Number(pidText);
  if (pid === process.pid) return !running.has(holderId);
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists (another user's); only ESRCH says it is gone.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

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
