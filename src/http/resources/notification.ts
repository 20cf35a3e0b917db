import type { Subscription } from 'rxjs';
import type { Resource } from '../routeTable';
import { RESPONSE_SENT, route } from '../routeTable';
import { UNIX_SECONDS, param } from '../params';
import { sortedJson } from '../render';
import { SseWriter } from '../sse';
import { claimStreamSlot } from '../streamSlots';
import type { NotificationOwner, NotificationRecord } from '../../bus/notifications';
import type { Principal } from '../principal';
import { requireNotificationStream } from '../featureSettings';

/** Girder's DEFAULT_STREAM_TIMEOUT. */
const DEFAULT_STREAM_TIMEOUT_S = 300;
/** Idle timeouts from 0 (send what is there and close) to a day: longer would overflow Node's timers (2^31 ms). */
const STREAM_TIMEOUT_S = { min: 0, max: 86_400 };
/** Keeps idle streams alive through proxies; comments are ignored by SSE clients. */
const STREAM_HEARTBEAT_MS = 30_000;

/** The caller's notifications: the user's, or for a token that identifies no user, the token's (Girder's get). */
function ownerOf(principal: Principal): NotificationOwner {
  return { userId: principal.user?._id ?? null, tokenId: principal.user ? null : (principal.token?.hash ?? null) };
}

/** One SSE message of Girder's stream: the record with sorted keys plus the server's clock. */
function sseData(record: NotificationRecord): string {
  return sortedJson({ ...record, _girderTime: Math.floor(Date.now() / 1000) });
}

export const notificationResource: Resource = {
  name: 'notification',
  description: 'Progress notifications of long-running requests.',
  routes: [
    route({
      method: 'GET',
      path: 'stream',
      summary: 'Stream notifications for a given user via the SSE protocol.',
      access: 'token',
      cookie: true,
      produces: 'text/event-stream',
      params: [
        param.int('timeout', {
          default: DEFAULT_STREAM_TIMEOUT_S,
          range: STREAM_TIMEOUT_S,
          description: 'The duration without a notification before the stream is closed (seconds, at most a day).',
        }),
        param.int('since', {
          range: UNIX_SECONDS,
          description: 'Filter out events before this time stamp (Unix seconds).',
        }),
      ],
      async handler({ params, principal, services, req, res }) {
        await requireNotificationStream(services);
        const owner = ownerOf(principal);
        // A HEAD request gets the headers only: there is no body to keep open.
        const timeoutMs = req.method === 'HEAD' ? 0 : (params.timeout ?? DEFAULT_STREAM_TIMEOUT_S) * 1000;
        const sinceMs = params.since === undefined ? null : params.since * 1000;
        const notifications = services.notifications;

        // Subscribe before reading the backlog so that nothing written in between is missed; changes that arrive
        // meanwhile wait until the backlog is out, and a version already sent is not sent twice.
        const pending: NotificationRecord[] = [];
        let sse: SseWriter | null = null;
        const lastSent = new Map<string, string>();
        let idle: NodeJS.Timeout | null = null;
        let subscription: Subscription | null = null;
        const stop = () => {
          subscription?.unsubscribe();
          if (idle) clearTimeout(idle);
        };
        const resetIdle = () => {
          if (idle) clearTimeout(idle);
          idle = setTimeout(() => sse?.close(), timeoutMs);
        };
        const emit = (record: NotificationRecord) => {
          if (!sse || sse.closed) return;
          if (sinceMs !== null && !(Date.parse(record.updated) > sinceMs)) return;
          const body = sortedJson(record);
          if (lastSent.get(record._id) === body) return;
          lastSent.set(record._id, body);
          if (sse.send(sseData(record))) resetIdle();
        };
        subscription = notifications.changesFor(owner).subscribe({
          next: (record) => (sse ? emit(record) : pending.push(record)),
          complete: () => sse?.close(),
        });
        let backlog: NotificationRecord[];
        try {
          backlog = await notifications.list(owner, sinceMs);
        } catch (error) {
          stop();
          throw error;
        }

        try {
          claimStreamSlot(services, principal.user?._id ?? null, req, res);
        } catch (error) {
          stop();
          throw error;
        }
        sse = SseWriter.open(res, { heartbeatMs: STREAM_HEARTBEAT_MS });
        sse.onClose(stop);
        for (const record of [...backlog, ...pending.splice(0)]) emit(record);
        if (subscription.closed || timeoutMs === 0) sse.close();
        else if (!sse.closed) resetIdle();
        return RESPONSE_SENT;
      },
    }),
    route({
      method: 'GET',
      path: '',
      summary: 'List notification events.',
      access: 'token',
      cookie: true,
      params: [param.dateTime('since', { description: 'Filter out events before this date.' })],
      async handler({ params, principal, services }) {
        return services.notifications.list(ownerOf(principal), params.since ?? null);
      },
    }),
  ],
};
