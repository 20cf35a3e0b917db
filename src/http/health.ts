import fs from 'node:fs';
import path from 'node:path';
import express, { type Request, type Response } from 'express';
import type { Services } from '../services';
import { READ_MODELS_CHECKPOINT } from '../projections/projector';
import { describeStorageFault, storageFaultOf } from '../ports/storageFault';
import { within } from '../ports/within';

/**
 * Probes for orchestrators and load balancers, outside /api/v1 and outside the request log:
 *  - `GET /healthz`: the process is up and serving HTTP (liveness) — always 200 `{"status":"ok"}`;
 *  - `GET /readyz`: the stores answer and the read models are current enough to serve (readiness) — 200, or 503
 *    with `failed` naming the checks that did not pass and `checks` saying why. The projector check says whether
 *    this process holds the projector lease (`lease: "held"`) or stands by (`"standby"`): a standby is ready when
 *    the shared read model, projected by the holder, is caught up. The storage check fails while writes fail on a
 *    full disk or a store that cannot be written (src/ports/storageFault.ts), naming the fault, until a write
 *    succeeds again: a write request, or this check's own probe write under DATA_DIR.
 */

export interface HealthOptions {
  /** Each store call must answer within this (default 2 s). */
  timeoutMs?: number;
  /** The projector counts as caught up while fewer than this many events wait for it (default 100). */
  maxLagEvents?: number;
}

type Check =
  | { status: 'ok'; [detail: string]: unknown }
  | { status: 'failed' | 'skipped'; error: string; [detail: string]: unknown };

/** What /readyz says about this process and the projector lease. */
const LEASE_STATES = { holder: 'held', standby: 'standby', stopped: 'stopped' } as const;

interface ReadinessReport {
  status: 'ok' | 'unavailable';
  /** The checks that failed (absent when ready). */
  failed?: string[];
  checks: { eventStore: Check; readModel: Check; projector: Check; storage: Check };
}

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_MAX_LAG_EVENTS = 100;

export function healthRoutes(services: Services, options: HealthOptions = {}): express.Router {
  const router = express.Router();
  router.get('/healthz', (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json({ status: 'ok' });
  });
  router.get('/readyz', async (_req: Request, res: Response) => {
    const report = await readiness(services, options);
    res.setHeader('Cache-Control', 'no-store');
    res.status(report.status === 'ok' ? 200 : 503).json(report);
  });
  return router;
}

/**
 * Readiness at the time of the call: the event store's head (`headPosition()` within the timeout), the read
 * model's checkpoint (within the timeout), and the projector — not stopped on a failure (else `stoppedAt` and `error`
 * say on which event and why), and at the head or fewer
 * than `maxLagEvents` events behind it (the holder: its own position; a standby: the read model's checkpoint).
 */
async function readiness(services: Services, options: HealthOptions = {}): Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxLag = options.maxLagEvents ?? DEFAULT_MAX_LAG_EVENTS;
  const { eventStore, readModel, projector } = services;

  const [head, checkpoint] = await Promise.allSettled([
    within(eventStore.headPosition(), timeoutMs, 'event store'),
    within(readModel.checkpoint(READ_MODELS_CHECKPOINT), timeoutMs, 'read model'),
  ]);
  const lease = LEASE_STATES[projector.role];
  const checks: ReadinessReport['checks'] = {
    eventStore:
      head.status === 'fulfilled' ? { status: 'ok', headPosition: head.value.toString() } : failed(head.reason),
    readModel:
      checkpoint.status === 'fulfilled'
        ? { status: 'ok', checkpoint: checkpoint.value.toString() }
        : failed(checkpoint.reason),
    projector: { status: 'skipped', lease, error: 'needs the event store head' },
    storage: await storageCheck(services, timeoutMs),
  };

  // A standby's own position trails the checkpoint a little (it follows it); the checkpoint is what it serves.
  const standby = projector.role === 'standby';
  const position = standby && checkpoint.status === 'fulfilled' ? checkpoint.value : projector.reflected;
  if (projector.failed) {
    // Where it stopped (the event that failed) when known: the position an operator needs to find the cause.
    const stopped = projector.stoppedOn;
    checks.projector = stopped
      ? {
          status: 'failed',
          lease,
          stoppedAt: stopped.position.toString(),
          error: `projection stopped at position ${stopped.position}: ${projector.failed.message}`,
        }
      : { status: 'failed', lease, error: `stopped: ${projector.failed.message}` };
  } else if (standby && checkpoint.status !== 'fulfilled') {
    checks.projector = { status: 'skipped', lease, error: 'needs the read model checkpoint' };
  } else if (head.status === 'fulfilled') {
    try {
      const lag =
        position >= head.value ? 0 : await within(countAfter(services, position, maxLag), timeoutMs, 'event store');
      checks.projector =
        lag < maxLag
          ? { status: 'ok', lease, position: position.toString(), lagEvents: lag }
          : {
              status: 'failed',
              lease,
              error: `${maxLag} or more events behind the head (projector at ${position}, head at ${head.value})`,
            };
    } catch (error) {
      checks.projector = { ...failed(error), lease };
    }
  }

  const failedChecks = Object.entries(checks)
    .filter(([, check]) => check.status === 'failed')
    .map(([name]) => name);
  return failedChecks.length === 0 ? { status: 'ok', checks } : { status: 'unavailable', failed: failedChecks, checks };
}

/** Bytes the probe writes: more than a page, so that a disk with no room left refuses it. */
const PROBE_BYTES = 64 * 1024;

/**
 * Whether writes may succeed again after a storage fault: a probe file in each directory where the stores create
 * files (DATA_DIR, the upload and blob directories under it), written, synced and removed
 * (a service taken out of rotation by this check gets no write request that could tell). A fault of the SQLite file
 * itself being read-only (`SQLITE_READONLY…`) is not something a file beside it can disprove: only a write request
 * that succeeds clears it.
 */
async function storageCheck(services: Services, timeoutMs: number): Promise<Check> {
  const { storageFaults } = services;
  let fault = storageFaults.current;
  if (!fault) return { status: 'ok' };
  if (!fault.code.startsWith('SQLITE_READONLY')) {
    try {
      await within(probeWrites(services), timeoutMs, 'the write probe');
      storageFaults.succeeded();
      return { status: 'ok' };
    } catch (error) {
      const again = storageFaultOf(error);
      if (again) fault = storageFaults.failed(again);
    }
  }
  return {
    status: 'failed',
    fault: fault.kind,
    code: fault.code,
    since: fault.since,
    error: describeStorageFault(fault),
  };
}

async function probeWrites(services: Services): Promise<void> {
  const { dataDir, blobStore } = services.config;
  const dirs = [dataDir, path.join(dataDir, 'uploads')];
  if (blobStore === 'fs') dirs.push(path.join(dataDir, 'blobs', 'tmp'));
  for (const dir of dirs) await probeWrite(dir);
}

async function probeWrite(dir: string): Promise<void> {
  const file = path.join(dir, `.write-probe-${process.pid}`);
  try {
    const handle = await fs.promises.open(file, 'w');
    try {
      await handle.write(Buffer.alloc(PROBE_BYTES));
      await handle.sync();
    } finally {
      await handle.close();
    }
  } finally {
    await fs.promises.rm(file, { force: true });
  }
}

/** Events after `position`, counted up to `limit`. */
async function countAfter(services: Services, position: bigint, limit: number): Promise<number> {
  let count = 0;
  for await (const _event of services.eventStore.readAll({ fromPosition: position, maxCount: limit })) count += 1;
  return count;
}

function failed(error: unknown): Check {
  return { status: 'failed', error: error instanceof Error ? error.message : String(error) };
}
