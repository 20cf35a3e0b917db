import { once } from 'node:events';
import { model } from '../modelParams';
import { z } from 'zod';
import type { Request, Response } from 'express';
import type { Resource, RouteDef } from '../routeTable';
import { RESPONSE_SENT, route } from '../routeTable';
import { param } from '../params';
import { DEFAULT_OVERFLOW_EVENT, SseWriter } from '../sse';
import { claimStreamSlot } from '../streamSlots';
import type { Services } from '../../services';
import type { RecordedEvent } from '../../ports/eventStore';
import { catchUpThenLive, type CatchUpSource } from '../../bus/domainEvents';
import { AccessLevel } from '../../domain/access';
import { folderStream } from '../../domain/folder';
import { folderEventSchemas } from '../../domain/folderEvents';
import { itemEventSchemas } from '../../domain/item';
import { uploadEventSchemas } from '../../domain/upload';
import { LoginCache, publicStreamId, redactEventData } from '../../queries/history';
import { mayReadFolderEvents, maySeeSubtreeEvent, startPosition } from '../../queries/eventStreamQueries';
import { Scope } from '../../domain/scopes';

/**
 * Domain events as server-sent events (docs/events.md): `GET /folder/:id/events` (one folder, or with `subtree=true`
 * its whole subtree, only what the caller may READ), `GET /events` (site admins: everything, `types` to filter), and
 * the published JSON Schemas of the event payloads at `GET /events/schema`.
 *
 * Every SSE message is one event: `id:` its log position, `event:` its type, `data:` the JSON envelope. A client
 * resumes
 * with `Last-Event-ID` (browsers send it on reconnect) or `?since=<position>`: it gets every later event exactly once
 * (catch-up from the event store, then live from the projector's fan-out, src/bus/domainEvents.ts). Without either the
 * stream starts with what happens next.
 */

/** Stream limits (tests shorten them). */
export const eventStreamLimits = {
  /** Idle streams send a comment line this often, so proxies keep them open. */
  heartbeatMs: 15_000,
  /** Bytes a client may leave unread before the stream ends with the overflow event (SseWriter's bound). */
  maxBufferedBytes: 1024 * 1024,
  /** During catch-up a client that does not read for this long is cut off (live, the buffer bound does it). */
  catchUpDrainTimeoutMs: 30_000,
};

const sinceParam = () =>
  param.string('since', { description: 'Resume after this log position (what Last-Event-ID carries).' });
const typesParam = () =>
  param.string('types', { description: 'Comma-separated event types to stream (default: all).' });

/** The position a client resumes from: Last-Event-ID (a reconnect), else `since`; undefined for neither. */
function resumeFrom(req: Request, since: string | undefined): string | undefined {
  const header = req.get('Last-Event-ID');
  return header !== undefined && header.trim() !== '' ? header.trim() : since?.trim();
}

function typeFilter(types: string | undefined): ((type: string) => boolean) | null {
  if (!types) return null;
  const wanted = new Set(
    types
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  );
  return (type) => wanted.has(type);
}

/** The SSE envelope of one event (the history entry's shape plus its stream). */
async function envelope(event: RecordedEvent, logins: LoginCache): Promise<string> {
  return JSON.stringify({
    streamId: publicStreamId(event.streamId),
    revision: Number(event.revision),
    position: event.position.toString(),
    type: event.type,
    at: event.metadata.at,
    userId: event.metadata.userId,
    login: await logins.login(event.metadata.userId),
    requestId: event.metadata.requestId,
    data: redactEventData(event.type, event.data),
  });
}

/**
 * Streams events from `since` on: catch-up then live, each through `eligible` (checked at delivery), until the client
 * goes, the service stops, or the client falls behind (the writer ends the stream with its overflow event).
 */
async function streamEvents(
  services: Services,
  req: Request,
  res: Response,
  options: {
    /** Whom the stream counts against (src/http/streamSlots.ts): the user, or null for an anonymous caller. */
    userId: string | null;
    source: CatchUpSource;
    since: bigint;
    eligible: (event: RecordedEvent) => Promise<boolean>;
  },
): Promise<typeof RESPONSE_SENT> {
  claimStreamSlot(services, options.userId, req, res);
  const sse = SseWriter.open(res, {
    heartbeatMs: eventStreamLimits.heartbeatMs,
    maxBufferedBytes: eventStreamLimits.maxBufferedBytes,
  });
  if (req.method === 'HEAD') {
    sse.close();
    return RESPONSE_SENT;
  }
  const logins = new LoginCache(services);
  let catchingUp = true;
  const feed = catchUpThenLive({
    store: services.eventStore,
    events: services.domainEvents,
    appliedPosition: () => services.projector.position$.value,
    source: options.source,
    since: options.since,
    onEnd: () => sse.close(),
    deliver: async (event) => {
      if (sse.closed || !(await options.eligible(event))) return;
      const sent = sse.send({ id: event.position.toString(), event: event.type, data: await envelope(event, logins) });
      // Catch-up reads faster than any network: wait for the client rather than let the buffer overflow.
      if (catchingUp && sent && res.writableNeedDrain) {
        const drained = await Promise.race([
          once(res, 'drain').then(
            () => true,
            () => false,
          ),
          new Promise<boolean>((resolve) =>
            setTimeout(resolve, eventStreamLimits.catchUpDrainTimeoutMs, false).unref(),
          ),
        ]);
        if (!drained) sse.close(DEFAULT_OVERFLOW_EVENT);
      }
    },
  });
  sse.onClose(() => feed.stop());
  feed.caughtUp.then(
    () => {
      catchingUp = false;
    },
    (error: unknown) => {
      services.logger.warn({ err: error }, 'event stream failed during catch-up');
      sse.close();
    },
  );
  return RESPONSE_SENT;
}

/** `GET /folder/:id/events`, registered with the folder routes (src/http/resources/folder.ts). */
export const folderEventRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: ':id/events',
    summary:
      "Stream a folder's domain events (with subtree=true, its descendants' and their items' too) as server-sent events.",
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    produces: 'text/event-stream',
    params: [
      param.flag('subtree', false, { description: 'Also stream the events of every descendant folder and item.' }),
      sinceParam(),
      typesParam(),
    ],
    models: { folder: model.path('folder', AccessLevel.READ) },
    async handler({ params, models: { folder }, services, principal, req, res }) {
      const since = await startPosition(services, resumeFrom(req, params.since));
      const wanted = typeFilter(params.types);
      const viewer = principal.viewer;
      if (!params.subtree) {
        return streamEvents(services, req, res, {
          userId: principal.user?._id ?? null,
          source: { streamId: folderStream(folder._id) },
          since,
          eligible: async (event) =>
            (!wanted || wanted(event.type)) && (await mayReadFolderEvents(services, viewer, folder._id)),
        });
      }
      return streamEvents(services, req, res, {
        userId: principal.user?._id ?? null,
        source: { streamPrefixes: ['folder-', 'item-'] },
        since,
        eligible: async (event) =>
          (!wanted || wanted(event.type)) && (await maySeeSubtreeEvent(services, viewer, folder._id, event)),
      });
    },
  }),
];

/** Stream names of the published event categories. */
const STREAMS = {
  folder: {
    stream: 'folder-<folderId>',
    description: 'One stream per folder: its own events and the subtree operations it was the subject of.',
  },
  item: { stream: 'item-<itemId>', description: "One stream per item: the item's events and its files'." },
  upload: { stream: 'upload-<uploadId>', description: 'One stream per upload session (chunked uploads).' },
} as const;

const metadataSchema = z.object({
  userId: z.string().nullable().describe('The user on whose behalf the event was written (null for system work).'),
  requestId: z.string().nullable().describe('The HTTP request (Girder-Request-Uid) or CLI run that caused it.'),
  correlationId: z.string().nullable().describe('Groups every event one user action caused.'),
  causationId: z.string().nullable().describe('The event or command that directly caused this one.'),
  at: z.string().describe('ISO 8601 time the event was recorded.'),
});

/** The published contract: stream names, event metadata, and each event's payload as JSON Schema (from the zod
 * schemas). */
function eventSchemaDocument(): Record<string, unknown> {
  const add = (category: keyof typeof STREAMS, schemas: Record<string, z.ZodType>) =>
    Object.entries(schemas).map(([type, schema]): [string, unknown] => [
      type,
      { category, stream: STREAMS[category].stream, data: z.toJSONSchema(schema, { io: 'input' }) },
    ]);
  const events = Object.fromEntries([
    ...add('folder', folderEventSchemas),
    ...add('item', itemEventSchemas),
    ...add('upload', uploadEventSchemas),
  ]);
  return {
    description:
      'Event payloads of the Folder Service. Stream `<category>-<id>`; each event carries metadata and data. Objects may gain ' +
      'optional fields over time: ignore what you do not know. See docs/events.md.',
    streams: STREAMS,
    metadata: z.toJSONSchema(metadataSchema, { io: 'input' }),
    events,
  };
}

export const eventsResource: Resource = {
  name: 'events',
  description: 'Domain events: the live stream of everything (site admins) and the published event schemas.',
  routes: [
    route({
      method: 'GET',
      path: '',
      summary: 'Stream every domain event as server-sent events (site admins); `types` filters by event type.',
      access: 'admin',
      cookie: true,
      produces: 'text/event-stream',
      params: [sinceParam(), typesParam()],
      async handler({ params, services, principal, req, res }) {
        const since = await startPosition(services, resumeFrom(req, params.since));
        const wanted = typeFilter(params.types);
        return streamEvents(services, req, res, {
          userId: principal.user?._id ?? null,
          source: {},
          since,
          eligible: async (event) => !wanted || wanted(event.type),
        });
      },
    }),
    route({
      method: 'GET',
      path: 'schema',
      summary: 'The JSON Schemas of the published event payloads, generated from their zod schemas.',
      access: 'public',
      params: [],
      handler: () => eventSchemaDocument(),
    }),
  ],
};
