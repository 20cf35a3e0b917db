// @ts-check
import ts from 'typescript';

/**
 * `local/no-plain-object-lookup`: a plain object must not be indexed (read, written or tested with `in`) by a key
 * whose type is any string. A string that came from a request can be `constructor`, `__proto__` or `toString`, and
 * every plain object answers those from Object.prototype: a lookup table returns a function, `in` says yes, a write
 * to `__proto__` replaces the prototype. Keys whose type is a union of literals (`'a' | 'b'`) and numbers are fine;
 * lookups keyed by request values go through `OwnMap` (src/domain/ownMap.ts) or a `Map`.
 * Type-aware: it asks the type checker whether the indexed type has a string index signature (Record<string, T>,
 * `{ [k: string]: T }`) or is `any`/`unknown`-ish, and whether the key's type is the wide `string`.
 */
const wideString = (type) => {
  if (type.isUnion()) return type.types.some(wideString);
  return (type.flags & (ts.TypeFlags.String | ts.TypeFlags.Any | ts.TypeFlags.TemplateLiteral)) !== 0;
};

const isArrayLike = (checker, type) =>
  checker.isArrayType(type) || checker.isTupleType(type) || /Array$/.test(type.getSymbol()?.getName() ?? '');

/** @type {import('eslint').Rule.RuleModule} */
export const noPlainObjectLookup = {
  meta: {
    type: 'problem',
    messages: {
      index:
        'A plain object indexed by a string key reaches Object.prototype for keys like "constructor" or "__proto__": use OwnMap (src/domain/ownMap.ts) or a Map.',
      in: '`key in object` is true for "constructor", "toString"…: use Object.hasOwn, an OwnMap or a Map.',
    },
    schema: [],
  },
  create(context) {
    // The typed parser's services (parserOptions.projectService): the program and the ESTree → TypeScript node map.
    const services = context.sourceCode.parserServices;
    const checker = services.program.getTypeChecker();
    const typeOf = (node) => checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node));
    return {
      MemberExpression(node) {
        if (!node.computed || node.property.type === 'Literal') return;
        if (!wideString(typeOf(node.property))) return;
        const objectType = checker.getApparentType(typeOf(node.object));
        if (isArrayLike(checker, objectType)) return;
        context.report({ node, messageId: 'index' });
      },
      BinaryExpression(node) {
        if (node.operator !== 'in' || node.left.type === 'Literal' || node.left.type === 'PrivateIdentifier') return;
        if (!wideString(typeOf(node.left))) return;
        context.report({ node, messageId: 'in' });
      },
    };
  },
};
