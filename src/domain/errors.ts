/**
 * Typed errors that commands, queries and routes raise. They are mapped to HTTP statuses and the documented
 * error body `{message, type[, field][, extra]}` in exactly one place: src/http/errorMapping.ts.
 */

/** An invalid request (type `rest`): bad parameter, unresolvable id, invalid search mode… Status defaults to 400. */
export class RestError extends Error {
  constructor(
    message: string,
    readonly status = 400,
    readonly extra?: unknown,
  ) {
    super(message);
    this.name = 'RestError';
  }
}

/** A model validation failure (type `validation`, always 400); `field` names the field when known. */
export class ValidationError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ValidationError';
  }
}

/** Access denied (type `access`): 401 when the caller is anonymous, 403 when logged in. */
export class AccessDeniedError extends Error {
  constructor(
    message: string,
    readonly extra?: unknown,
  ) {
    super(message);
    this.name = 'AccessDeniedError';
  }
}
