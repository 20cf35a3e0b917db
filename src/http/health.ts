import express, { type Request, type Response } from 'express';
import type { Services } from '../services';
import { READ_MODELS_CHECKPOINT } from '../projections/projector';

/**
 * Probes for orchestrators and load balancers, outside /api/v1 and outside the request log:
 *  - `GET /healthz`: the process is up and serving HTTP (liveness) — always 200 `{"status":"ok"}`;
 *  - `GET /readyz`: the stores answer and the read models are current enough to serve (readiness) — 200, or 503
 *    with `failed` naming the checks that did not pass and `checks` saying why. The projector check says whether
 *    this process holds the projector lease (`lease: "held"`) or stands by (`"standby"`): a standby is ready when
 *    the shared read model, projected by the holder, is caught up.
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

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  /** The checks that failed (absent when ready). */
  failed?: string[];
  checks: { eventStore: Check; readModel: Check; projector: Check };
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
export async function readiness(services: Services, options: HealthOptions = {}): Promise<ReadinessReport> {
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

/** Events after `position`, counted up to `limit`. */
async function countAfter(services: Services, position: bigint, limit: number): Promise<number> {
  let count = 0;
  for await (const _event of services.eventStore.readAll({ fromPosition: position, maxCount: limit })) count += 1;
  return count;
}

function failed(error: unknown): Check {
  return { status: 'failed', error: error instanceof Error ? error.message : String(error) };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
