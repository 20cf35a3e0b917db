/**
 * Faults of the storage under the stores, named so that a client and an operator can tell them from a bug: a full
 * disk (`ENOSPC`, `EDQUOT`, `SQLITE_FULL`) and a store that cannot be written (`EROFS`, `EACCES`, `EPERM`,
 * `SQLITE_READONLY*`). Recognised by the error's `code`, which Node's fs errors and better-sqlite3's errors carry,
 * and which errors sent back from a worker thread keep (src/infra/threadErrors.ts); the cause chain is searched too.
 * The HTTP layer answers 507 and 503 (src/http/errorMapping.ts) and readiness reports it (src/http/health.ts).
 */
type StorageFaultKind = 'full' | 'readOnly';

export interface StorageFault {
  kind: StorageFaultKind;
  /** The code that named it (`ENOSPC`, `SQLITE_READONLY_DBMOVED`…). */
  code: string;
  /** What the underlying error said. */
  detail: string;
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);
const READ_ONLY_CODES = new Set(['EROFS', 'EACCES', 'EPERM']);
/** Causes followed at most (a cycle of causes must not loop). */
const MAX_CAUSES = 8;

function kindOf(code: string): StorageFaultKind | undefined {
  if (FULL_CODES.has(code)) return 'full';
  if (READ_ONLY_CODES.has(code) || code.startsWith('SQLITE_READONLY')) return 'readOnly';
  return undefined;
}

/**
 * The storage fault behind `error`, if it is one. Checked by shape, not by class: errors of Node's own modules are
 * not instances of the `Error` of every realm (a test's VM context, say).
 */
export function storageFaultOf(error: unknown): StorageFault | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSES && typeof current === 'object' && current !== null; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    const kind = typeof code === 'string' ? kindOf(code) : undefined;
    if (kind && typeof code === 'string') return { kind, code, detail: typeof message === 'string' ? message : code };
    current = cause;
  }
  return undefined;
}

/** The words of a fault for an answer and for readiness. */
export function describeStorageFault(fault: StorageFault): string {
  return fault.kind === 'full'
    ? `the disk of the data store is full (${fault.code}: ${fault.detail})`
    : `the data store cannot be written (${fault.code}: ${fault.detail})`;
}
