import fs from 'node:fs';
import path from 'node:path';

/**
 * The docs name files so a reader can open them; a file renamed or removed without its docs leaves the reader a path
 * to nothing. Every file path README.md and docs/*.md name must exist:
 * - a path in code (`src/…`, `test/…`, `bench/…`, `docs/…`, `scripts/…`, `.ci/…`, inline or in a fenced block; each
 *   word of a command is looked at): the file or folder, or, for a module named without its extension
 *   (`test/contract/sqliteEventStore`), a file of that name with one;
 * - a bare file name in code (`lateEvents.ts`): a file of that name somewhere in the repository, since the text
 *   around it says which folder;
 * - the target of a relative Markdown link.
 * Placeholders (`src/domain/<aggregate>.ts`, `bench/*.bench.ts`, `…03-30-16-155Z.json`) are not paths, and what
 * .gitignore lists (build output, `test/e2e/artifacts/`) is made at run time: both are skipped. Cheap: it reads the
 * docs and walks the top folders once per test.
 */

const ROOT = path.resolve(__dirname, '../..');
const TOP_FOLDERS = ['src', 'test', 'bench', 'docs', 'scripts', '.ci'];
const PLACEHOLDER = /[*<>{}[\]…$]/;
const BARE_NAME = /^[\w.-]+\.(?:ts|js|mjs|cjs|md)$/;

/** The folders .gitignore lists by path (`test/e2e/artifacts/`): made at run time, not in the repository. */
const IGNORED = fs
  .readFileSync(path.join(ROOT, '.gitignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line.endsWith('/') && !PLACEHOLDER.test(line));

function docFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name));
  return ['README.md', ...docs];
}

/** The base names of every file at the root and under the top folders (for bare names). */
function fileNames(): Set<string> {
  const names = new Set<string>(fs.readdirSync(ROOT));
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
      else names.add(entry.name);
    }
  };
  for (const top of TOP_FOLDERS) if (fs.existsSync(path.join(ROOT, top))) walk(path.join(ROOT, top));
  return names;
}

/** The text inside code: fenced blocks and inline spans. */
function codeOf(markdown: string): string[] {
  const pieces: string[] = [];
  const outside = markdown.replace(/^```[^\n]*\n([\s\S]*?)^```/gm, (_block, body: string) => {
    pieces.push(body);
    return '';
  });
  for (const match of outside.matchAll(/`([^`\n]+)`/g)) pieces.push(match[1]);
  return pieces;
}

/** A word of code without the quotes, brackets and punctuation prose or shell puts around it. */
const trimWord = (word: string): string => word.replace(/^[('"=]+/, '').replace(/[)'",;:.]+$/, '');

function repoPathExists(relative: string): boolean {
  const full = path.join(ROOT, relative);
  if (fs.existsSync(full)) return true;
  // A module named without its extension.
  const dir = path.dirname(full);
  const base = path.basename(full);
  return fs.existsSync(dir) && fs.readdirSync(dir).some((name) => name.startsWith(`${base}.`));
}

/** Every path the text of `doc` (relative to the repository) names that does not exist, as `<doc>: <path>`. */
function missingPaths(doc: string, text: string, names: Set<string>): string[] {
  const missing = new Set<string>();
  for (const piece of codeOf(text)) {
    for (const raw of piece.split(/\s+/)) {
      const word = trimWord(raw).replace(/^\.\//, '');
      if (!word || PLACEHOLDER.test(word) || IGNORED.some((folder) => word.startsWith(folder))) continue;
      const isRepoPath = TOP_FOLDERS.some((top) => word.startsWith(`${top}/`));
      if (isRepoPath && !repoPathExists(word)) missing.add(word);
      if (!isRepoPath && BARE_NAME.test(word) && !names.has(word)) missing.add(word);
    }
  }
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1].split('#')[0];
    if (!target || /^[a-z]+:/i.test(target)) continue;
    if (!fs.existsSync(path.resolve(path.dirname(path.join(ROOT, doc)), target))) missing.add(match[1]);
  }
  return [...missing].map((p) => `${doc}: ${p}`);
}

it('every file path README.md and docs/*.md name exists', () => {
  const names = fileNames();
  const missing = docFiles().flatMap((doc) => missingPaths(doc, fs.readFileSync(path.join(ROOT, doc), 'utf8'), names));
  expect(missing).toEqual([]);
});

it('finds a path that does not exist, of each kind', () => {
  const names = fileNames();
  const text = [
    'See `src/projections/lateEvents.ts` and `src/gone/nowhere.ts`, `docs/nowhere.md`, `npx tsx bench/prof/gone.ts 3`.',
    'Bare: `lateEvents.ts` and `neverWritten.ts`. Placeholders: `src/domain/<aggregate>.ts`, `bench/*.bench.ts`.',
    'Without an extension: `test/contract/sqliteEventStore` and `test/contract/neverWritten`.',
    'Made at run time: `dist/cli/main.js`, `test/e2e/artifacts/step.png`.',
    '[events](events.md), [gone](gone.md#anchor), [site](https://example.org/x.md).',
    '```bash',
    'npx jest test/unit/docsLinks.test.ts test/unit/gone.test.ts',
    '```',
  ].join('\n');
  expect(missingPaths('docs/example.md', text, names).sort()).toEqual(
    [
      'src/gone/nowhere.ts',
      'test/unit/gone.test.ts',
      'docs/nowhere.md',
      'bench/prof/gone.ts',
      'neverWritten.ts',
      'test/contract/neverWritten',
      'gone.md#anchor',
    ]
      .map((p) => `docs/example.md: ${p}`)
      .sort(),
  );
});
