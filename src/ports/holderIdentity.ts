import fs from 'node:fs';
import os from 'node:os';
import { randomBytes } from 'node:crypto';

/**
 * Process identities for state several processes share (the projector lease, blob claims), in the ports layer so
 * that both the projections and the adapters may use them. Holder ids: `<hostname>:<pid>:<pid namespace>:<random>`.
 * Besides naming the holder for operators, the id lets a process on the same host and in the same pid namespace tell
 * that a holder is gone (its process no longer exists), so that a service restarted after `kill -9` takes its read
 * model's projector lease over at once instead of waiting for it to expire, and a blob claim of a dead process stops
 * keeping its blob (src/infra/blobs/claims.ts). Anywhere else (another host, another container, no /proc) nothing is
 * concluded and the lease simply expires.
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
