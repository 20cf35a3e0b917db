import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';

export const EVENT_STORES = ['sqlite', 'kurrentdb'] as const;
export const READ_MODELS = ['sqlite', 'mongodb'] as const;
export const BLOB_STORES = ['fs', 'gridfs'] as const;
/** Connection-string schemes `@kurrent/kurrentdb-client` accepts (esdb is its deprecated alias). */
const KURRENTDB_URL_SCHEMES = ['kurrentdb', 'kurrent', 'kdb', 'esdb'].flatMap((s) => [s, `${s}+discover`]);
const MONGODB_URL_SCHEMES = ['mongodb', 'mongodb+srv'];

type EventStoreKind = (typeof EVENT_STORES)[number];
type ReadModelKind = (typeof READ_MODELS)[number];
type BlobStoreKind = (typeof BLOB_STORES)[number];

export interface Config {
  port: number;
  dataDir: string;
  production: boolean;
  /** Lifetime of login tokens and the token cookie, in days (Girder's core.cookie_lifetime). */
  tokenLifetimeDays: number;
  logLevel: string;
  /** Where events live: the embedded SQLite file, or a KurrentDB server (`kurrentdbUrl`). */
  eventStore: EventStoreKind;
  kurrentdbUrl: string | undefined;
  /** How long startup may wait for KurrentDB to answer before giving up. */
  kurrentdbConnectTimeoutMs: number;
  /** Where read models live: the embedded SQLite file, or MongoDB (`mongodbUrl`). */
  readModel: ReadModelKind;
  mongodbUrl: string | undefined;
  /** Where file bytes live: under DATA_DIR, or GridFS in MongoDB (`mongodbUrl`). */
  blobStore: BlobStoreKind;
  /**
   * How long the bytes of files removed by a folder delete or clear are kept (so the folder can be restored), in days;
   * the blob reclaimer purges them after that. 0 purges at once.
   */
  blobRetentionDays: number;
  /** The storage sweep spares blobs stored less than this long ago (ms): another process may not have projected their
   * file yet. */
  blobSweepGraceMs: number;
  /**
   * Time to live of the projector lease (one projector per read model across the processes that share it), in ms:
   * the holder renews it every third of this, a standby asks for it as often, and a holder that dies without freeing
   * it is replaced after at most this long.
   */
  projectorLeaseTtlMs: number;
  /**
   * Subtree operations (copy, delete, empty, recursive access, collection delete) over at least this many folders are
   * applied to the embedded read model in a worker thread, off the event loop (docs/subtree-operations.md). The
   * default, 200, is about what the set-wise SQL gets through in 25 ms on a slow machine: half the loop's budget.
   */
  bulkWorkerMinFolders: number;
  /**
   * How often (ms) the bulk worker reports how far a followed subtree operation has got, for its progress
   * notification (default 250; 0 reports every few dozen rows, for tests).
   */
  bulkProgressIntervalMs: number;
  /**
   * How long an event append waits for the embedded SQLite file's write lock while another process holds it (its
   * commit of a large copy or delete takes seconds), in ms; after that the request is answered 503 and nothing is
   * written. The wait is on the append worker thread: the event loop keeps serving meanwhile.
   */
  appendLockWaitMs: number;
  /**
   * Password guessing (docs/security.md, "Logins and guessing"): failed password checks a login, and a client address,
   * may make before each further one waits; the first wait in ms, doubled with every further failure up to the
   * longest wait in ms.
   */
  loginFreeFailures: number;
  loginDelayMs: number;
  loginMaxDelayMs: number;
  /** Event streams and notification sockets one caller (a user, or an anonymous client address) may hold open. */
  streamsPerCaller: number;
  /**
   * Which proxies' `X-Forwarded-*` headers are believed (express's `trust proxy`): `false` (none, the default), a
   * number of proxy hops, addresses or subnets, or `true` (every sender; only when nothing reaches the service but
   * through the proxy). It decides `req.secure` (the cookie's Secure) and `req.host` (the file origin).
   */
  trustProxy: boolean | number | string[];
  /**
   * The separate origin file bytes are served from (`https://files.example.org`), or undefined: downloads requested
   * on any other host are redirected there with a signed link (docs/security.md, "The file origin").
   */
  fileOrigin: string | undefined;
  /** The key of those signed links (FILE_URL_SECRET), the same in every process; set when `fileOrigin` is. */
  fileUrlSecret: string | undefined;
  /**
   * How long a request body may send nothing while the service waits for it, in ms (BODY_IDLE_TIMEOUT_SECONDS,
   * default 30 s): past it the request is answered 408 and its connection closed (src/http/bodyRemainder.ts).
   */
  bodyIdleTimeoutMs: number;
}

/** A configuration mistake, worded for a one-line startup error. */
class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const KURRENTDB_EXAMPLE = 'kurrentdb://localhost:2113?tls=false';
const MONGODB_EXAMPLE = 'mongodb://localhost:27017/folder-service?replicaSet=rs0';

const oneOf = (name: string, values: readonly string[]) =>
  z.enum(values as [string, ...string[]], {
    error: (issue) => `${name} must be one of ${values.join(', ')}, got "${String(issue.input)}".`,
  });

const urlWithScheme = (name: string, schemes: string[], example: string) =>
  z.string().refine(
    (value) => {
      const match = /^([a-z][a-z0-9+.-]*):\/\/[^/?#\s]+/i.exec(value.trim());
      return match !== null && schemes.includes(match[1].toLowerCase());
    },
    { error: (issue) => `${name} must be a ${schemes[0]}:// URL such as ${example}, got "${String(issue.input)}".` },
  );

const TRUST_PROXY_ERROR =
  'TRUST_PROXY must be true, false, a number of proxies, or a comma-separated list of addresses or subnets ' +
  '(loopback, linklocal, uniquelocal, 10.0.0.0/8, ::1, …)';
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** An address or subnet as express's `trust proxy` (proxy-addr) takes it: `10.0.0.1`, `10.0.0.0/8`, `::1/128`. */
function isAddressOrSubnet(entry: string): boolean {
  if (PROXY_NAMES.includes(entry)) return true;
  const parts = entry.split('/');
  const family = net.isIP(parts[0]);
  if (family === 0 || parts.length > 2) return false;
  if (parts.length === 1) return true;
  return /^\d+$/.test(parts[1]) && Number(parts[1]) <= (family === 4 ? 32 : 128);
}

const trustProxy = z.string().transform((value, ctx): boolean | number | string[] => {
  const v = value.trim().toLowerCase();
  if (v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  const entries = v.split(',').map((entry) => entry.trim());
  if (entries.every(isAddressOrSubnet)) return entries;
  ctx.addIssue({ code: 'custom', message: `${TRUST_PROXY_ERROR}, got "${value}".` });
  return z.NEVER;
});

const FILE_ORIGIN_ERROR = 'FILE_ORIGIN must be an origin such as https://files.example.org (scheme, host, port)';

/** FILE_ORIGIN as `new URL(…).origin` gives it: http(s), a host, no path, query or credentials. */
const fileOrigin = z.string().transform((value, ctx): string => {
  let url: URL | undefined;
  try {
    url = new URL(value.trim());
  } catch {
    url = undefined;
  }
  if (
    !url ||
    !['http:', 'https:'].includes(url.protocol) ||
    url.username ||
    url.password ||
    url.pathname !== '/' ||
    url.search ||
    url.hash
  ) {
    ctx.addIssue({ code: 'custom', message: `${FILE_ORIGIN_ERROR}, got "${value}".` });
    return z.NEVER;
  }
  return url.origin;
});

/** The shortest FILE_URL_SECRET accepted: 32 characters (at least 128 bits if random base64 or hex). */
const MIN_FILE_URL_SECRET_LENGTH = 32;

const positiveInteger = (name: string) =>
  z.coerce
    .number({ error: () => `${name} must be a positive integer.` })
    .int(`${name} must be a positive integer.`)
    .positive(`${name} must be a positive integer.`);

const schema = z
  .object({
    PORT: z.string().optional(),
    DATA_DIR: z.string().optional(),
    NODE_ENV: z.string().optional(),
    TOKEN_LIFETIME_DAYS: z.string().optional(),
    LOG_LEVEL: z.string().optional(),
    EVENT_STORE: oneOf('EVENT_STORE', EVENT_STORES).default('sqlite'),
    KURRENTDB_URL: urlWithScheme('KURRENTDB_URL', KURRENTDB_URL_SCHEMES, KURRENTDB_EXAMPLE).optional(),
    KURRENTDB_CONNECT_TIMEOUT_MS: positiveInteger('KURRENTDB_CONNECT_TIMEOUT_MS').default(10_000),
    READ_MODEL: oneOf('READ_MODEL', READ_MODELS).default('sqlite'),
    MONGODB_URL: urlWithScheme('MONGODB_URL', MONGODB_URL_SCHEMES, MONGODB_EXAMPLE).optional(),
    BLOB_STORE: oneOf('BLOB_STORE', BLOB_STORES).default('fs'),
    BLOB_RETENTION_DAYS: z.coerce
      .number({ error: () => 'BLOB_RETENTION_DAYS must be a non-negative number of days.' })
      .nonnegative('BLOB_RETENTION_DAYS must be a non-negative number of days.')
      .default(7),
    BLOB_SWEEP_GRACE_SECONDS: z.coerce
      .number({ error: () => 'BLOB_SWEEP_GRACE_SECONDS must be a non-negative number of seconds.' })
      .nonnegative('BLOB_SWEEP_GRACE_SECONDS must be a non-negative number of seconds.')
      .default(3600),
    PROJECTOR_LEASE_TTL_MS: positiveInteger('PROJECTOR_LEASE_TTL_MS')
      .min(100, 'PROJECTOR_LEASE_TTL_MS must be at least 100 (milliseconds).')
      .default(15_000),
    BULK_WORKER_MIN_FOLDERS: positiveInteger('BULK_WORKER_MIN_FOLDERS').default(200),
    BULK_PROGRESS_INTERVAL_MS: z.coerce
      .number({ error: () => 'BULK_PROGRESS_INTERVAL_MS must be a non-negative number of milliseconds.' })
      .int('BULK_PROGRESS_INTERVAL_MS must be a non-negative number of milliseconds.')
      .nonnegative('BULK_PROGRESS_INTERVAL_MS must be a non-negative number of milliseconds.')
      .default(250),
    APPEND_LOCK_WAIT_MS: positiveInteger('APPEND_LOCK_WAIT_MS').default(30_000),
    LOGIN_FREE_FAILURES: positiveInteger('LOGIN_FREE_FAILURES').default(5),
    LOGIN_DELAY_MS: positiveInteger('LOGIN_DELAY_MS').default(1000),
    LOGIN_MAX_DELAY_SECONDS: positiveInteger('LOGIN_MAX_DELAY_SECONDS').default(900),
    STREAMS_PER_CALLER: positiveInteger('STREAMS_PER_CALLER').default(20),
    TRUST_PROXY: trustProxy.optional(),
    FILE_ORIGIN: fileOrigin.optional(),
    FILE_URL_SECRET: z.string().optional(),
    BODY_IDLE_TIMEOUT_SECONDS: z.coerce
      .number({ error: () => 'BODY_IDLE_TIMEOUT_SECONDS must be a positive number of seconds.' })
      .positive('BODY_IDLE_TIMEOUT_SECONDS must be a positive number of seconds.')
      .max(3600, 'BODY_IDLE_TIMEOUT_SECONDS must be at most 3600 seconds.')
      .default(30),
  })
  .superRefine((env, ctx) => {
    if (env.EVENT_STORE === 'kurrentdb' && !env.KURRENTDB_URL) {
      ctx.addIssue({
        code: 'custom',
        message: `EVENT_STORE=kurrentdb needs KURRENTDB_URL (e.g. ${KURRENTDB_EXAMPLE}).`,
      });
    }
    if (env.READ_MODEL === 'mongodb' && !env.MONGODB_URL) {
      ctx.addIssue({ code: 'custom', message: `READ_MODEL=mongodb needs MONGODB_URL (e.g. ${MONGODB_EXAMPLE}).` });
    }
    if (env.BLOB_STORE === 'gridfs' && !env.MONGODB_URL) {
      ctx.addIssue({ code: 'custom', message: `BLOB_STORE=gridfs needs MONGODB_URL (e.g. ${MONGODB_EXAMPLE}).` });
    }
    if (env.FILE_ORIGIN && (env.FILE_URL_SECRET ?? '').length < MIN_FILE_URL_SECRET_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        message: `FILE_ORIGIN needs FILE_URL_SECRET: at least ${MIN_FILE_URL_SECRET_LENGTH} random characters, the same in every process (e.g. openssl rand -hex 32).`,
      });
    }
  });

/** Every environment variable the service reads. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

/** Reads the settings from the environment; throws one {@link ConfigError} naming every mistake. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty variables count as unset (compose files and shells often pass `VAR=`).
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => issue.message).join(' '));
  const vars = parsed.data;

  const port = Number(vars.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be a port number, got "${env.PORT}".`);
  return {
    port,
    dataDir: path.resolve(vars.DATA_DIR ?? './data'),
    production: vars.NODE_ENV === 'production',
    tokenLifetimeDays: Number(vars.TOKEN_LIFETIME_DAYS ?? 180),
    logLevel: vars.LOG_LEVEL ?? (vars.NODE_ENV === 'test' ? 'silent' : 'info'),
    eventStore: vars.EVENT_STORE as EventStoreKind,
    kurrentdbUrl: vars.KURRENTDB_URL?.trim(),
    kurrentdbConnectTimeoutMs: vars.KURRENTDB_CONNECT_TIMEOUT_MS,
    readModel: vars.READ_MODEL as ReadModelKind,
    mongodbUrl: vars.MONGODB_URL?.trim(),
    blobStore: vars.BLOB_STORE as BlobStoreKind,
    blobRetentionDays: vars.BLOB_RETENTION_DAYS,
    blobSweepGraceMs: vars.BLOB_SWEEP_GRACE_SECONDS * 1000,
    projectorLeaseTtlMs: vars.PROJECTOR_LEASE_TTL_MS,
    bulkWorkerMinFolders: vars.BULK_WORKER_MIN_FOLDERS,
    bulkProgressIntervalMs: vars.BULK_PROGRESS_INTERVAL_MS,
    appendLockWaitMs: vars.APPEND_LOCK_WAIT_MS,
    loginFreeFailures: vars.LOGIN_FREE_FAILURES,
    loginDelayMs: vars.LOGIN_DELAY_MS,
    loginMaxDelayMs: vars.LOGIN_MAX_DELAY_SECONDS * 1000,
    streamsPerCaller: vars.STREAMS_PER_CALLER,
    trustProxy: vars.TRUST_PROXY ?? false,
    fileOrigin: vars.FILE_ORIGIN,
    fileUrlSecret: vars.FILE_ORIGIN ? vars.FILE_URL_SECRET : undefined,
    bodyIdleTimeoutMs: Math.round(vars.BODY_IDLE_TIMEOUT_SECONDS * 1000),
  };
}
