import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The dependency rule of docs/ARCHITECTURE.md ("Layers"), checked on the real import graph of `src/`: every relative
 * import (value or type-only, static, re-export or dynamic) is parsed with the TypeScript compiler API, each file is
 * placed in its layer, and an import is allowed only towards a layer its own layer may use. No file may take part in
 * an import cycle.
 */

const SRC = path.resolve(__dirname, '../../src');

type Layer =
  | 'domain'
  | 'config'
  | 'ports'
  | 'bus'
  | 'projections'
  | 'queries'
  | 'services'
  | 'commands'
  | 'http'
  | 'infra'
  | 'wiring';

/** What each layer may import besides itself. Keep in step with the table in docs/ARCHITECTURE.md. */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  domain: [],
  config: [],
  ports: ['domain'],
  bus: ['domain', 'ports'],
  projections: ['domain', 'ports', 'bus'],
  queries: ['domain', 'config', 'ports', 'bus', 'projections'],
  services: ['config', 'ports', 'bus', 'projections', 'commands'],
  commands: ['domain', 'config', 'ports', 'bus', 'projections', 'queries'],
  http: ['domain', 'config', 'ports', 'bus', 'projections', 'queries', 'services', 'commands'],
  infra: ['domain', 'ports'],
  wiring: ['domain', 'config', 'ports', 'bus', 'projections', 'queries', 'services', 'commands', 'http', 'infra'],
};

/** The layer of a file under src/, or null for a file no rule places (a new top-level folder must be added above). */
function layerOf(file: string): Layer | null {
  const [top] = path.relative(SRC, file).split(path.sep);
  switch (top) {
    case 'domain':
    case 'ports':
    case 'bus':
    case 'projections':
    case 'queries':
    case 'commands':
    case 'http':
    case 'infra':
      return top;
    case 'config.ts':
      return 'config';
    case 'services.ts':
      return 'services';
    case 'bootstrap.ts':
    case 'cli':
    case 'workers':
      return 'wiring';
    default:
      return null;
  }
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every module specifier a file names: imports, re-exports, `import()` (types and dynamic) and `require()`. */
function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expr = node.moduleReference.expression;
      if (ts.isStringLiteral(expr)) found.push(expr.text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal.text);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
      node.arguments.length === 1 &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveRelative(from: string, specifier: string): string {
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${path.relative(SRC, from)} imports ${specifier}, which resolves to no file`);
}

/** The file-level import graph of src/ (relative imports only: packages are outside the rule). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    graph.set(
      file,
      specifiersOf(file)
        .filter((s) => s.startsWith('.'))
        .map((s) => resolveRelative(file, s)),
    );
  }
  return graph;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan's algorithm). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v))
        cycles.push(component.map((f) => path.relative(SRC, f)).sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return cycles;
}

const relative = (file: string) => path.relative(SRC, file);
const graph = importGraph();

describe('layering of src/', () => {
  it('places every source file in a layer', () => {
    const unplaced = [...graph.keys()].filter((file) => layerOf(file) === null).map(relative);
    expect(unplaced).toEqual([]);
  });

  it('imports only from the layers each layer may use', () => {
    const violations: string[] = [];
    for (const [file, targets] of graph) {
      const from = layerOf(file);
      if (!from) continue;
      for (const target of targets) {
        const to = layerOf(target);
        if (to && to !== from && !ALLOWED[from].includes(to))
          violations.push(`${relative(file)} (${from}) → ${relative(target)} (${to})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('keeps the read side out of every loop of the layer table: queries reach neither services nor commands', () => {
    const reachable = (from: Layer): Set<Layer> => {
      const seen = new Set<Layer>();
      const stack = [...ALLOWED[from]];
      while (stack.length > 0) {
        const layer = stack.pop()!;
        if (seen.has(layer)) continue;
        seen.add(layer);
        stack.push(...ALLOWED[layer]);
      }
      return seen;
    };
    const readSide: Layer[] = ['domain', 'config', 'ports', 'bus', 'projections', 'queries', 'infra'];
    expect(readSide.filter((layer) => reachable(layer).has(layer))).toEqual([]);
    expect([...reachable('queries')].filter((layer) => layer === 'services' || layer === 'commands')).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('finds a cycle and an upward import when there is one (the checks above can fail)', () => {
    const a = path.join(SRC, 'domain', 'a.ts');
    const b = path.join(SRC, 'domain', 'b.ts');
    expect(
      cyclesOf(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual([['domain/a.ts', 'domain/b.ts']]);
    expect(ALLOWED.domain.includes(layerOf(path.join(SRC, 'http', 'app.ts'))!)).toBe(false);
    // ports/readModel.ts names './readModel/history' only in a re-export (`export type * from`).
    expect(specifiersOf(path.join(SRC, 'ports', 'readModel.ts'))).toEqual(
      expect.arrayContaining(['./readModel/history']),
    );
  });
});
