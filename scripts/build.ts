/**
 * Production build (`npm run build`, run by `prestart`): each process entry bundled by esbuild into one JavaScript
 * file at the path tsc would give it (dist/cli/main.js, dist/workers/*.js, the adapters' thread entries), so that
 * start-up reads a handful of files instead of compiling hundreds of small modules (docs/performance.md, "Cold start").
 *
 * Packages that load lazily (optional adapters, zip, websockets, the API page), native ones and those read as files
 * at run time stay outside, required from node_modules as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';

const ROOT = path.join(__dirname, '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');

/** The processes' entry points, relative to src/ (a worker thread's entry is a process entry of its own). */
const ENTRIES = [
  'cli/main.ts',
  'workers/bulkApplyWorker.ts',
  'workers/appendProjectingWorker.ts',
  // Required by appendProjectingWorker with its first write to project: a bundle of its own, loaded only then.
  'workers/projectAppended.ts',
  'workers/appendWorkerThread.ts',
  'workers/replayWriterThread.ts',
  'workers/offLoopReadsThread.ts',
  'infra/blobs/sha512Thread.ts',
];

const EXTERNAL = [
  'better-sqlite3',
  'mongodb',
  '@kurrent/kurrentdb-client',
  'archiver',
  'ws',
  'swagger-ui-dist',
  '@girder/core',
  'tsx',
];

/**
 * Inside a bundle every module shares the entry's `__dirname`; the sources use theirs to find files beside them
 * (package.json, worker entries, the browser scripts). Each module's `__dirname` and `__filename` are rewritten to
 * the place tsc would have put it under dist/, so those paths stay what they were.
 */
function moduleLocation(entryOutDir: string): Plugin {
  return {
    name: 'module-location',
    setup(esbuild) {
      esbuild.onLoad({ filter: /\.ts$/ }, async ({ path: file }) => {
        const source = await fs.promises.readFile(file, 'utf8');
        if (!file.startsWith(SRC + path.sep) || !/__(dirname|filename)/.test(source)) return undefined;
        const compiled = path.join(DIST, path.relative(SRC, file)).replace(/\.ts$/, '.js');
        const fromEntry = (target: string) =>
          `require("node:path").join(__dirname, ${JSON.stringify(path.relative(entryOutDir, target) || '.')})`;
        const contents = source
          .replace(/\b__dirname\b/g, fromEntry(path.dirname(compiled)))
          .replace(/\b__filename\b/g, fromEntry(compiled));
        return { contents, loader: 'ts' };
      });
    },
  };
}

/**
 * A module that is itself an entry stays outside the bundles that require it: it is loaded from its own bundle, when
 * it is required (a worker's lazily loaded part), instead of being parsed with the entry that requires it.
 */
function entriesStayOutside(entry: string, entryOutDir: string): Plugin {
  const others = new Set(ENTRIES.filter((e) => e !== entry));
  return {
    name: 'entries-stay-outside',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^\./ }, ({ path: specifier, resolveDir }) => {
        const target = path.relative(SRC, path.resolve(resolveDir, specifier));
        if (!others.has(`${target}.ts`)) return undefined;
        // Required from the bundle's own directory, where the other entry's bundle sits as tsc would have put it.
        const fromBundle = path.relative(entryOutDir, path.join(DIST, target));
        return { path: fromBundle.startsWith('.') ? fromBundle : `./${fromBundle}`, external: true };
      });
    },
  };
}

async function main(): Promise<void> {
  fs.rmSync(DIST, { recursive: true, force: true });
  for (const entry of ENTRIES) {
    const outfile = path.join(DIST, entry.replace(/\.ts$/, '.js'));
    await build({
      entryPoints: [path.join(SRC, entry)],
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      external: EXTERNAL,
      minifyWhitespace: true,
      minifySyntax: true,
      sourcemap: true,
      sourcesContent: false,
      logLevel: 'warning',
      plugins: [entriesStayOutside(entry, path.dirname(outfile)), moduleLocation(path.dirname(outfile))],
    });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
