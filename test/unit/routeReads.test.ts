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
