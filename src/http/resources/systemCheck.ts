import type { Services } from '../../services';
import { RestError } from '../../domain/errors';

/** Whether a check runs in this process: one at a time (each replays the whole log into a scratch copy). */
let running = false;

/**
 * `PUT /system/check`: Girder prunes orphans, fixes base parents and recalculates sizes, each stored beside the data
 * and able to drift. Here every one of those is derived from the event log by the projections, so the check is
 * verify's (src/cli/verify.ts): the live read models against a replay of the log. Girder's three counts are kept in
 * the answer and are 0 (nothing is changed); `readModels` tells whether the read models match and, when not, each
 * difference, which `npm run cli -- rebuild` repairs. The replay runs on this process's event loop: an administrator's
 * maintenance request, refused while another runs.
 */
export async function systemConsistencyCheck(services: Services): Promise<Record<string, unknown>> {
  if (running) throw new RestError('A system check is already running.', 409);
  running = true;
  try {
    const result = await services.checkReadModels();
    return {
      orphansRemoved: 0,
      baseParentsFixed: 0,
      sizesChanged: 0,
      readModels: {
        matches: result.differences.length === 0 && result.stopped === undefined,
        events: result.events,
        position: result.position.toString(),
        differences: result.differences,
        ...(result.stopped
          ? {
              stopped: {
                position: result.stopped.position.toString(),
                head: result.stopped.head.toString(),
                error: `${result.stopped.error.name}: ${result.stopped.error.message}`,
              },
            }
          : {}),
      },
    };
  } finally {
    running = false;
  }
}
