import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Routes read through query functions (docs/ARCHITECTURE.md, "Read path"): a file under `src/http/resources/` keeps
 * the HTTP concerns and calls `src/queries/`, so it neither touches the read model (`services.readModel`, a
 * destructured `readModel`) nor calls the event store (`services.eventStore.headPosition()`). Handing the read model to
 * a command function (`changeSettings(services.commands, services.readModel, …)`) is the write side's own dependency,
 * not a read in the route, and is left to the commands' signatures. Checked on the syntax tree, so comments and
 * strings that name these do not count.
 */

const RESOURCES = path.resolve(__dirname, '../../src/http/resources');
const HTTP = path.resolve(__dirname, '../../src/http');
const COMMANDS = path.resolve(__dirname, '../../src/commands');

/** Names a file imports from `src/commands/` (relative specifiers that pass through a `commands/` folder). */
function commandImports(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!/(^|\/)commands\//.test(statement.moduleSpecifier.text)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add(element.name.text);
  }
  return names;
}

/** Whether `node` is an argument of a call to a function the file imports from `src/commands/`. */
function isCommandArgument(node: ts.Node, commands: Set<string>): boolean {
  const call = node.parent;
  return (
    ts.isCallExpression(call) &&
    call.arguments.some((argument) => argument === node) &&
    ts.isIdentifier(call.expression) &&
    commands.has(call.expression.text)
  );
}

/** `<line>: <code>` for each place the file reads the read model or calls the event store itself. */
function directReads(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const commands = commandImports(source);
  const found: string[] = [];
  const report = (node: ts.Node, why: string) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push(`${line}: ${why}: ${node.getText(source)}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node)) {
      const name = node.name.text;
      if (name === 'readModel' && !isCommandArgument(node, commands)) report(node, 'reads the read model');
      if (ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'eventStore')
        report(node, 'calls the event store');
    } else if (
      ts.isElementAccessExpression(node) &&
      ts.isStringLiteralLike(node.argumentExpression) &&
      ['readModel', 'eventStore'].includes(node.argumentExpression.text)
    ) {
      report(node, 'reads a store by its key');
    } else if (ts.isBindingElement(node)) {
      const key = node.propertyName ?? node.name;
      if (ts.isIdentifier(key) && ['readModel', 'eventStore'].includes(key.text)) report(node, 'destructures a store');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('route files read through query functions', () => {
  it('no file under src/http/resources reads the read model or calls the event store itself', () => {
    const files = routeFiles(RESOURCES);
    expect(files.length).toBeGreaterThan(20);
    const violations = files.flatMap((file) =>
      directReads(file, fs.readFileSync(file, 'utf8')).map((hit) => `${path.relative(RESOURCES, file)}:${hit}`),
    );
    expect(violations).toEqual([]);
  });

  it('finds each form of a direct read, and lets a command be handed the read model (the check can fail)', () => {
    const route = [
      "import { changeSettings } from '../../commands/settingsCommands';",
      "import { userView } from '../../queries/views';",
      'async function handler(services, id, changes, meta) {',
      '  const user = await services.readModel.users.get(id);',
      '  const { readModel } = services;',
      "  const store = services['eventStore'];",
      '  const head = await services.eventStore.headPosition();',
      '  userView(services.readModel, id);',
      '  await changeSettings(services.commands, services.readModel, changes, meta);',
      '  // services.readModel.users.get(id) in a comment is no read',
      '}',
    ].join('\n');
    expect(directReads('route.ts', route)).toEqual([
      '4: reads the read model: services.readModel',
      '5: destructures a store: readModel',
      "6: reads a store by its key: services['eventStore']",
      '7: calls the event store: services.eventStore.headPosition',
      '8: reads the read model: services.readModel',
    ]);
  });
});

/**
 * The other half of the rule: what a route takes from `src/commands/` is a write. Every value src/http imports from a
 * command module must be a function that reaches the stream handle (`commands.handle` / `handleGroup`: it appends
 * events) or the mailer (`mailer.send`: an account mail goes out), directly or through the command functions it
 * names, followed across the command modules by their imports. A read kept in a command module (a fold of a stream, a
 * setting, a policy) reaches neither, and fails here: it belongs in `src/queries/`, where commands import it too.
 * Checked on the syntax tree; type-only imports (`RequestMeta`, `UploadOutcome`) carry no code and are not checked.
 */

type Sources = Map<string, string>;

/** `[importing file, name, command module]` for each value a file imports from a `commands/` folder. */
function commandValueImports(file: string, text: string): [string, string, string][] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: [string, string, string][] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const specifier = statement.moduleSpecifier.text;
    const clause = statement.importClause;
    if (!/(^|\/)commands\//.test(specifier) || !clause || clause.phaseModifier === ts.SyntaxKind.TypeKeyword) continue;
    const module = path.resolve(path.dirname(file), specifier) + '.ts';
    if (clause.name) found.push([file, 'default', module]);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamedImports(bindings))
      for (const element of bindings.elements)
        if (!element.isTypeOnly) found.push([file, (element.propertyName ?? element.name).text, module]);
  }
  return found;
}

type ModuleIndex = ReturnType<typeof indexModule>;
const indexes = new WeakMap<Sources, Map<string, ModuleIndex>>();

/** {@link indexModule}, parsed once per module of a set of sources. */
function moduleIndex(sources: Sources, file: string, text: string): ModuleIndex {
  const parsed = indexes.get(sources) ?? new Map<string, ModuleIndex>();
  indexes.set(sources, parsed);
  const index = parsed.get(file) ?? indexModule(file, text);
  parsed.set(file, index);
  return index;
}

/** A command module's top-level functions (declarations and `const f = (…) => …`) and the names it imports. */
function indexModule(file: string, text: string) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const functions = new Map<string, ts.Node>();
  const imports = new Map<string, { module: string; name: string }>();
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name && statement.body)
      functions.set(statement.name.text, statement.body);
    if (ts.isVariableStatement(statement))
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        if (ts.isIdentifier(declaration.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          functions.set(declaration.name.text, init.body);
      }
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const bindings = statement.importClause?.namedBindings;
      const module = path.resolve(path.dirname(file), statement.moduleSpecifier.text) + '.ts';
      if (bindings && ts.isNamedImports(bindings))
        for (const element of bindings.elements)
          imports.set(element.name.text, { module, name: (element.propertyName ?? element.name).text });
    }
  }
  return { functions, imports };
}

/** Whether a node is a call of `<x>.handle(…)`, `<x>.handleGroup(…)` or `<x>.mailer.send(…)`. */
function isWriteCall(node: ts.Node): boolean {
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return false;
  const { name, expression } = node.expression;
  if (name.text === 'handle' || name.text === 'handleGroup') return true;
  const owner = ts.isPropertyAccessExpression(expression) ? expression.name : expression;
  return name.text === 'send' && ts.isIdentifier(owner) && owner.text === 'mailer';
}

/** `x.name`: a member of some value, not a function the module names. */
const isMemberName = (node: ts.Identifier): boolean =>
  ts.isPropertyAccessExpression(node.parent) && node.parent.name === node;

/**
 * Whether the function `name` of the command module `module` reaches a write, following the functions of the command
 * modules (`sources`) its body names. A name that is no function of a command module (a class, a constant, a module
 * outside `sources`) reaches none.
 */
function reachesWrite(sources: Sources, module: string, name: string, seen = new Set<string>()): boolean {
  const key = `${module}#${name}`;
  const text = sources.get(module);
  if (seen.has(key) || text === undefined) return false;
  const writers = writersOf.get(sources) ?? new Set<string>();
  writersOf.set(sources, writers);
  if (writers.has(key)) return true;
  seen.add(key);
  if (!followCalls(sources, module, name, text, seen)) return false;
  writers.add(key);
  return true;
}

/** Functions found to reach a write (a "no" is not kept: it may hold only for the path that met a cycle). */
const writersOf = new WeakMap<Sources, Set<string>>();

/** {@link reachesWrite} for one function: its body, or (for a name the module imports) that function in its module. */
function followCalls(sources: Sources, module: string, name: string, text: string, seen: Set<string>): boolean {
  const index = moduleIndex(sources, module, text);
  const body = index.functions.get(name);
  if (!body) {
    const imported = index.imports.get(name);
    return imported !== undefined && reachesWrite(sources, imported.module, imported.name, seen);
  }
  const visit = (node: ts.Node): boolean =>
    isWriteCall(node) ||
    (ts.isIdentifier(node) && !isMemberName(node) && reachesWrite(sources, module, node.text, seen)) ||
    (ts.forEachChild(node, visit) ?? false);
  return visit(body);
}

/** `<file>: <name> from <module>` for each value src/http imports from a command module that reaches no write. */
function readsFromCommands(importers: Sources, commands: Sources, root: string): string[] {
  return [...importers].flatMap(([file, text]) =>
    commandValueImports(file, text)
      .filter(([, name, module]) => !reachesWrite(commands, module, name))
      .map(([, name, module]) => `${path.relative(root, file)}: ${name} from ${path.relative(root, module)}`),
  );
}

function readAll(files: string[]): Sources {
  return new Map(files.map((file) => [file, fs.readFileSync(file, 'utf8')]));
}

describe('routes take only writes from src/commands', () => {
  it('every value src/http imports from src/commands reaches the stream handle or the mailer', () => {
    const importers = readAll(routeFiles(HTTP));
    const commands = readAll(routeFiles(COMMANDS));
    const imported = [...importers].flatMap(([file, text]) => commandValueImports(file, text));
    expect(imported.length).toBeGreaterThan(40);
    expect(readsFromCommands(importers, commands, path.dirname(HTTP))).toEqual([]);
  });

  it('refuses a read exported by a command module and follows writes through helpers and imports (the check can fail)', () => {
    const root = '/src';
    const commands: Sources = new Map([
      [
        '/src/commands/thingCommands.ts',
        [
          "import { streamState } from '../queries/streamState';",
          "import { notify } from './thingMail';",
          'export async function loadThing(deps, id) { return (await streamState(deps, id, decider)).state; }',
          'export async function saveThing(deps, id, meta) { await deps.commands.handle(id, decider, meta, (s) => s); }',
          'async function appendGroup(deps, meta) { return deps.commands.handleGroup(meta, async () => ({})); }',
          'export const renameThing = (deps, meta) => appendGroup(deps, meta);',
          'export async function mailThing(deps, user) { await notify(deps, user); }',
          'export function planThing(deps, meta) { return async () => saveThing(deps, 1, meta); }',
          '// deps.commands.handle(…) in a comment is no write',
          'export function describeThing(thing) { return `handle ${thing.name}`; }',
        ].join('\n'),
      ],
      ['/src/commands/thingMail.ts', 'export function notify(deps, user) { deps.mailer.send({}, { to: [user] }); }'],
    ]);
    const route = [
      "import type { RequestMeta } from '../../commands/requestMeta';",
      'import {',
      '  loadThing, saveThing, renameThing, mailThing, planThing, describeThing, type Thing,',
      "} from '../../commands/thingCommands';",
    ].join('\n');
    expect(readsFromCommands(new Map([['/src/http/resources/thing.ts', route]]), commands, root)).toEqual([
      'http/resources/thing.ts: loadThing from commands/thingCommands.ts',
      'http/resources/thing.ts: describeThing from commands/thingCommands.ts',
    ]);
  });
});
