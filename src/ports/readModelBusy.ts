/**
 * A read that did not begin: the read models were applying a change too large for one transaction (a copy, move or
 * delete of a large subtree, src/infra/readmodel/mongodb/stepwiseApply.ts) for the whole wait, and reading then could
 * have shown part of it. Nothing was read or changed, so the same request may simply be sent again; the HTTP layer
 * answers 503 with `Retry-After`.
 */
export class ReadModelBusyError extends Error {
  constructor(readonly waitedMs: number) {
    super(
      `the read models were applying a large change (a copy, move or delete of a large subtree) for over ${waitedMs} ms`,
    );
    this.name = 'ReadModelBusyError';
  }
}
