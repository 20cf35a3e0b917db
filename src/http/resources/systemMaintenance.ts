import os from 'node:os';
import type { Logger } from 'pino';
import { RESPONSE_SENT, route, type RouteDef } from '../routeTable';
import { Scope } from '../../domain/scopes';
import { pagingOf, pagingParams, param } from '../params';
import { fixedSortKeys } from '../../domain/sortKeys';
import { AccessDeniedError, RestError, ValidationError } from '../../domain/errors';
import { ownValue } from '../../domain/ownMap';
import type { Services } from '../../services';
import { uploadsInProgress, type UploadFilters } from '../../queries/uploadsInProgress';
import { uploadView } from '../../queries/itemQueries';
import { cancelUpload } from '../../commands/uploadCommands';
import { untrackedUploads, untrackedUploadView, type UntrackedUpload } from '../../queries/untrackedUploads';
import { API_ROOT } from '../apiRequests';
import { LOG_NAMES, type LogName } from '../../ports/logTail';
import { systemConsistencyCheck } from './systemCheck';
import { withProgress } from '../../bus/progress';
import { takesMultipartUploads } from '../../ports/blobStore';

/**
 * Girder's system maintenance routes (`girder/api/v1/system.py`): configuration, uploads in progress, the system
 * check, the log and its level. Settings and plugins are in system.ts.
 */

/** Girder's level names (Python's logging) by pino level; pino's `trace` and `silent` have none and keep their own. */
const GIRDER_LEVEL_NAMES: Record<string, string> = {
  fatal: 'CRITICAL',
  error: 'ERROR',
  warn: 'WARNING',
  info: 'INFO',
  debug: 'DEBUG',
};
const GIRDER_LEVELS = ['CRITICAL', 'ERROR', 'WARNING', 'INFO', 'DEBUG'] as const;
type GirderLevel = (typeof GIRDER_LEVELS)[number];
const PINO_LEVELS: Record<GirderLevel, string> = {
  CRITICAL: 'fatal',
  ERROR: 'error',
  WARNING: 'warn',
  INFO: 'info',
  DEBUG: 'debug',
};
const levelName = (logger: Logger): string => GIRDER_LEVEL_NAMES[logger.level] ?? logger.level.toUpperCase();

/**
 * What Girder's `girder.cfg` sections hold, as this service is configured (src/config.ts). Nothing secret is here: the
 * database connection strings and the file link key are left out.
 */
function configuration(services: Services): Record<string, Record<string, unknown>> {
  const { config } = services;
  return {
    global: { 'server.socket_port': config.port },
    server: {
      mode: config.production ? 'production' : 'development',
      api_root: API_ROOT.slice(1),
      static_public_path: '/static',
    },
    logging: { log_level: levelName(services.logger), log_access: ['screen'] },
  };
}

/** `minimumAge`: Girder's float parameter (days). */
function parseMinimumAge(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(value)) throw new RestError(`Invalid value for numeric parameter minimumAge: ${raw}.`);
  return value;
}

const UPLOAD_FILTER_PARAMS = [
  param.string('uploadId', { description: 'Only this upload.' }),
  param.string('userId', { description: 'Only uploads started by this user.' }),
  param.string('parentId', { description: 'Only uploads into this folder or item.' }),
  param.string('assetstoreId', { description: 'Only uploads within this assetstore.' }),
  param.string('minimumAge', { description: 'Only uploads at least this many days old (a number).' }),
  param.flag('includeUntracked', true, {
    description: 'Also partial uploads the assetstores hold that belong to no upload in progress.',
  }),
] as const;

function uploadFilters(params: Record<string, unknown>): UploadFilters {
  const filters: UploadFilters = {};
  for (const key of ['uploadId', 'userId', 'parentId', 'assetstoreId'] as const) {
    const value = params[key];
    if (typeof value === 'string') filters[key] = value;
  }
  const minimumAge = parseMinimumAge(params.minimumAge as string | undefined);
  if (minimumAge !== undefined) filters.minimumAge = minimumAge;
  return filters;
}

/**
 * The untracked uploads of the stores the filters name (src/queries/untrackedUploads.ts), as listed; stores that could
 * not be reached are logged and left out, as Girder leaves them.
 */
async function untrackedFor(services: Services, filters: UploadFilters): Promise<UntrackedUpload[]> {
  const { found, unreachable } = await untrackedUploads(services, filters);
  if (unreachable.length > 0)
    services.logger.warn(
      {
        assetstores: unreachable.map(({ name }) => name),
        reasons: Object.fromEntries(unreachable.map(({ name, reason }) => [name, reason])),
      },
      'Could not list the untracked uploads of these assetstores',
    );
  return found;
}

/**
 * Discards untracked uploads (Girder's adapters' `untrackedUploads(…, delete=True)`): a store's upload is aborted
 * (S3's AbortMultipartUpload, GridFS's parts removed), a partial file removed. Bytes only, so no command: nothing in
 * the log names them.
 */
async function discardUntracked(services: Services, found: UntrackedUpload[]): Promise<void> {
  for (const entry of found) {
    if (entry.kind === 'held') {
      const store = await services.blobs.adapterOf(entry.assetstoreId);
      if (takesMultipartUploads(store)) await store.abortUpload(entry.upload);
    } else if (entry.kind === 'partial') await services.partialUploads.remove(entry.uploadId);
    else await services.partialUploads.removeStray(entry.name);
  }
}

/** The fields of an upload document (itemQueries.ts `uploadView`) a listing of uploads sorts by. */
const UPLOAD_SORT = fixedSortKeys('updated', [
  '_id',
  'created',
  'updated',
  'size',
  'name',
  'mimeType',
  'received',
  'userId',
  'parentType',
  'parentId',
  'fileId',
]);

/** Upload documents in `sort` order (a missing field first), ties by `_id`, reversed for `sortdir` -1. */
function sortedViews(views: Record<string, unknown>[], sort: string, sortdir: 1 | -1): Record<string, unknown>[] {
  // Every sortable field of an upload document is a string or a number (UPLOAD_SORT).
  const rank = (value: unknown): [number, string | number] =>
    typeof value === 'number' ? [1, value] : typeof value === 'string' ? [2, value] : [0, 0];
  const compare = (a: unknown, b: unknown): number => {
    const [ra, va] = rank(a);
    const [rb, vb] = rank(b);
    if (ra !== rb) return ra - rb;
    return va < vb ? -1 : va > vb ? 1 : 0;
  };
  return [...views].sort((a, b) => sortdir * (compare(ownValue(a, sort), ownValue(b, sort)) || compare(a._id, b._id)));
}

const routes: RouteDef[] = [
  route({
    method: 'GET',
    path: 'configuration',
    summary: 'Get the value of a system configuration option.',
    access: 'admin',
    scope: [Scope.SETTINGS_READ],
    params: [
      param.requiredString('section', { description: 'The section identifying the configuration option.' }),
      param.requiredString('key', { description: 'The key identifying the configuration option.' }),
    ],
    handler({ params, services }) {
      const section = ownValue(configuration(services), params.section);
      if (section === undefined) throw new ValidationError('No section with that name exists.');
      const value = ownValue(section, params.key);
      if (value === undefined) throw new ValidationError('No key with that name exists.');
      return value;
    },
  }),
  route({
    method: 'GET',
    path: 'uploads',
    summary: 'Get a list of uploads that have not been finished.',
    access: 'admin',
    scope: [Scope.PARTIAL_UPLOAD_READ],
    params: [
      ...UPLOAD_FILTER_PARAMS,
      // Girder's pagingParams(defaultSort='updated').
      ...pagingParams(UPLOAD_SORT),
    ],
    async handler({ params, services }) {
      const filters = uploadFilters(params);
      const { limit, offset, sort, sortdir } = pagingOf(params);
      const found = sortedViews((await uploadsInProgress(services, filters)).map(uploadView), sort, sortdir);
      const page: object[] = limit ? found.slice(offset, offset + limit) : found.slice(offset);
      // Girder's order: the tracked page, then untracked entries up to the limit.
      if (params.includeUntracked && (limit === 0 || page.length < limit)) {
        const untracked = (await untrackedFor(services, filters)).map(untrackedUploadView);
        page.push(...(limit === 0 ? untracked : untracked.slice(0, limit - page.length)));
      }
      return page;
    },
  }),
  route({
    method: 'DELETE',
    path: 'uploads',
    summary: 'Discard uploads that have not been finished.',
    access: 'admin',
    scope: [Scope.PARTIAL_UPLOAD_CLEAN],
    params: UPLOAD_FILTER_PARAMS,
    async handler({ params, services, principal, meta }) {
      const filters = uploadFilters(params);
      const found = await uploadsInProgress(services, filters);
      const adminId = principal.user?._id ?? '';
      // Each cancel is the same command as `DELETE /file/upload/:id` (an UploadCancelled event), by this admin.
      for (const upload of found)
        await cancelUpload(services, { uploadId: upload.uploadId, userId: adminId, admin: true }, meta);
      const discarded: object[] = found.map(uploadView);
      if (params.includeUntracked) {
        const untracked = await untrackedFor(services, filters);
        await discardUntracked(services, untracked);
        discarded.push(...untracked.map(untrackedUploadView));
      }
      return discarded;
    },
  }),
  route({
    method: 'GET',
    path: 'check',
    summary: 'Report the current system status.',
    access: 'public',
    params: [
      param.enum('mode', ['basic', 'quick', 'slow'], {
        default: 'basic',
        description: '"basic" for anyone; "quick" adds cheap process details, "slow" costlier ones (administrators).',
      }),
    ],
    handler({ params, principal, req }) {
      const mode = params.mode ?? 'basic';
      if (mode !== 'basic' && !principal.user?.admin) throw new AccessDeniedError('Administrator access required.');
      const now = Date.now() / 1000;
      const status: Record<string, unknown> = {
        bootTime: Math.round(now - os.uptime()),
        currentTime: now,
        processStartTime: now - process.uptime(),
      };
      if (mode !== 'basic') Object.assign(status, processDetails());
      if (mode === 'slow') status.loadAverage = os.loadavg();
      // cherrypy's `request.base`: the scheme and host the request was sent to, no path.
      status.requestBase = `${req.protocol}://${req.get('host') ?? ''}`;
      return status;
    },
  }),
  route({
    method: 'PUT',
    path: 'check',
    summary: 'Perform a variety of system checks to verify that all is well.',
    access: 'admin',
    params: [param.flag('progress', false, { description: 'Whether to record progress on this task.' })],
    handler: ({ params, services, principal }) =>
      withProgress(
        services,
        {
          on: params.progress,
          userId: principal.user?._id ?? null,
          title: 'Running system consistency check',
          message: 'Comparing the read models with a replay of the event log',
        },
        () => systemConsistencyCheck(services),
      ),
  }),
  route({
    method: 'GET',
    path: 'log',
    summary: 'Show the most recent contents of the server logs.',
    access: 'admin',
    produces: 'text/plain',
    params: [
      param.int('bytes', { default: 4096, description: 'How many bytes from the end of the log to show (0: all).' }),
      param.enum('log', LOG_NAMES, { default: 'error', description: 'Which log to tail.' }),
    ],
    handler({ params, services, res }) {
      const log = (params.log ?? 'error') as LogName;
      const tail = services.logTail.tail(log, params.bytes ?? 4096);
      res.type('text/plain');
      res.send(Buffer.concat([Buffer.from(`=== Last ${tail.length} bytes of the ${log} log: ===\n\n`), tail]));
      return RESPONSE_SENT;
    },
  }),
  route({
    method: 'GET',
    path: 'log/level',
    summary: 'Get the current log level.',
    access: 'admin',
    params: [],
    handler: ({ services }) => levelName(services.logger),
  }),
  route({
    method: 'PUT',
    path: 'log/level',
    summary: 'Set the current log level.',
    access: 'admin',
    params: [param.enum('level', GIRDER_LEVELS, { default: 'INFO', description: 'The new level to set.' })],
    handler({ params, services }) {
      // Request loggers are children made per request: they take the new level from the next request on.
      services.logger.level = PINO_LEVELS[(params.level ?? 'INFO') as GirderLevel];
      return levelName(services.logger);
    },
  }),
];

/** `quick` mode's process details (Girder's from psutil; here from node:os and node:process). */
function processDetails(): Record<string, unknown> {
  const memory = process.memoryUsage();
  return {
    virtualMemory: { total: os.totalmem(), available: os.freemem() },
    cpuCount: os.cpus().length,
    processMemory: { rss: memory.rss, heapTotal: memory.heapTotal, heapUsed: memory.heapUsed },
    processName: process.title,
    exe: process.execPath,
    cwd: process.cwd(),
    userName: os.userInfo().username,
    processCpuTimes: process.cpuUsage(),
  };
}

export const systemMaintenanceRoutes = routes;
