import fs from 'node:fs';
import path from 'node:path';
import { MAX_CACHED, prepared } from '../../src/infra/sqlite/preparedStatements';
import { sqlLimit } from '../../src/infra/sqlite/sqlLimit';
import { openReadModelFile, type ReadModelFile } from '../support/readModelFile';

/**
 * The per-connection statement cache (src/infra/sqlite/preparedStatements.ts) and the rule that keeps its statements
 * compiled: a page's row count is written into the SQL, never bound (SQLite compiles a statement again on every run
 * when its `LIMIT` is a parameter).
 */

let scratch: ReadModelFile;
beforeEach(() => {
  scratch = openReadModelFile('prepared');
});
afterEach(() => scratch.remove());

it('hands out the same statement for the same text, with the modes reset', () => {
  const first = prepared(scratch.db, 'SELECT 1 AS one').pluck();
  expect(first.get()).toBe(1);
  const again = prepared(scratch.db, 'SELECT 1 AS one');
  expect(again).toBe(first);
  expect(again.get()).toEqual({ one: 1 });
});

it('keeps the most recently used statements and drops the least recently used past the bound', () => {
  const hot = prepared(scratch.db, 'SELECT 0');
  for (let i = 1; i <= MAX_CACHED; i++) {
    prepared(scratch.db, `SELECT ${i}`);
    // A statement asked for all along is never the one dropped.
    if (i % 100 === 0) expect(prepared(scratch.db, 'SELECT 0')).toBe(hot);
  }
  expect(prepared(scratch.db, 'SELECT 0')).toBe(hot);
  // `SELECT 1` was the least recently used when the cache went past its bound: it was compiled again.
  const one = prepared(scratch.db, 'SELECT 1');
  expect(one.pluck().get()).toBe(1);
  expect(prepared(scratch.db, `SELECT ${MAX_CACHED}`)).toBe(prepared(scratch.db, `SELECT ${MAX_CACHED}`));
});

it('writes a row count into the SQL and refuses anything but a non-negative safe integer', () => {
  expect(sqlLimit(50)).toBe('LIMIT 50');
  expect(sqlLimit(0)).toBe('LIMIT 0');
  expect(sqlLimit(Number.MAX_SAFE_INTEGER)).toBe(`LIMIT ${Number.MAX_SAFE_INTEGER}`);
  for (const bad of [-1, 1.5, Number.NaN, Infinity, 2 ** 53]) expect(() => sqlLimit(bad)).toThrow(RangeError);
  expect(() => sqlLimit('1; DROP TABLE rm_folders' as unknown as number)).toThrow(RangeError);
});

it('no SQL of the service binds a LIMIT', () => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith('.ts')) {
        fs.readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            // `LIMIT ?`, `LIMIT @name`, `LIMIT :name`, `LIMIT $name`, outside comments.
            if (/LIMIT\s+[?@:$][^{]/.test(line) && !/^\s*(\*|\/\/)/.test(line)) offenders.push(`${file}:${i + 1}`);
          });
      }
    }
  };
  walk(path.resolve(__dirname, '../../src'));
  expect(offenders).toEqual([]);
});
