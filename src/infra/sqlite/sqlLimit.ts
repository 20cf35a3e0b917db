/**
 * A `LIMIT` row count written into the SQL text rather than bound.
 *
 * SQLite plans with the value of a bound `LIMIT ?` (it sizes the result and pushes the limit into the plan), and so
 * marks the statement to be compiled again whenever that parameter is bound, which better-sqlite3 does on every run:
 * a page read through a prepared `LIMIT ?` was parsed and planned anew each time (the projector's read of new events,
 * ~10 µs of every `POST /folder`; a listing page, ~40 µs). With the count in the text, a statement stays compiled for
 * the next page of that size. `OFFSET ?` stays bound: SQLite plans with it only for a virtual table.
 */
export function sqlLimit(rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 0) throw new RangeError(`not a row count: ${rows}`);
  return `LIMIT ${rows}`;
}
