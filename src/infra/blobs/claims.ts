import { isHolderGone } from '../../ports/holderIdentity';

/**
 * "Stored, not yet referenced" records, shared by every process on one blob store (files under the blob root, or
 * documents next to the GridFS bucket). A put records one for its blob before it decides whether the bytes are
 * already stored, and a hold (a copy, a restore) before it commits; `release`, which comes once the command that
 * references the blob has committed and its projection is visible (or has failed), removes it. A delete, whether
 * the startup sweep's or a reclaim's, first takes the blob out of place, then looks for claims of other processes,
 * and puts it back when it finds one:
 *
 *   put (process B):  claim X  →  is X stored?  →  keep it / store it
 *   delete (A):       move X aside  →  claimed by another process?  →  put X back / drop it
 *
 * Whichever order the steps of A and B interleave in, B either finds X in place after A put it back, or finds it
 * missing and stores its own copy: no file ever references a blob a delete removed. Claims of this store instance
 * are not looked at: its in-process holds (holds.ts) already keep those blobs.
 *
 * A claim stops counting once its process is known to be gone (same host and pid namespace, src/ports/
 * holderIdentity.ts) or once it is older than {@link CLAIM_STALE_MS} (a process elsewhere that died); what a dead
 * process stored is then covered by the sweep's grace period (young blobs are never swept).
 */

/** A claim older than this no longer keeps its blob, whoever made it. */
export const CLAIM_STALE_MS = 24 * 60 * 60 * 1000;

/** Default grace period of the sweep: blobs stored (or stored again) less than this long ago are never swept. */
export const DEFAULT_SWEEP_GRACE_MS = 60 * 60 * 1000;

/** Whether a claim made by `holder` at `at` (epoch ms) still keeps its blob, seen from store instance `self`. */
export function claimCounts(holder: string, at: number, self: string, now = Date.now()): boolean {
  if (holder === self) return false;
  if (now - at > CLAIM_STALE_MS) return false;
  return !isHolderGone(holder);
}
