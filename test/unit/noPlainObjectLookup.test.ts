import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The lint rule behind rule 1 of docs/http-conventions.md (scripts/eslint/noPlainObjectLookup.mjs) refuses a plain
 * object indexed or tested by a string key, and lets literal keys, array elements and Object.hasOwn through. ESLint
 * runs in its own process (the rule and the configuration are ES modules) on a fixture, with the type checker, as
 * `npm run lint` runs it on src/.
 */
const ROOT = path.join(__dirname, '..', '..');
const FIXTURE = path.join(__dirname, 'fixtures', 'plainObjectLookups.ts');

it('flags exactly the lookups by a string key', async () => {
  const eslint = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');
  const args = [eslint, '--format', 'json', '--rule', '{"local/no-plain-object-lookup": "error"}', FIXTURE];
  // ESLint exits 1 when it finds problems: the report is on stdout either way.
  const stdout = await promisify(execFile)(process.execPath, args, { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).then(
    (out) => out.stdout,
    (error: unknown) => (error as { stdout?: string }).stdout ?? '',
  );
  const [result] = JSON.parse(stdout) as { messages: { ruleId: string | null; line: number }[] }[];
  const flagged = result.messages.filter((m) => m.ruleId === 'local/no-plain-object-lookup').map((m) => m.line);
  const expected = fs
    .readFileSync(FIXTURE, 'utf8')
    .split('\n')
    .flatMap((line, i) => (line.endsWith('// flagged') ? [i + 1] : []));
  expect(expected.length).toBe(4);
  expect(flagged).toEqual(expected);
}, 180_000); // A type-checked ESLint run: a minute on a busy 2-core machine.
