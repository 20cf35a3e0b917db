import type { ReadModelDeps } from './readDeps';
import type { TokenDoc } from '../ports/readModel';
import type { ScopeName } from '../domain/scopes';
import { hashToken } from '../domain/token';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps<'tokens'>;

/**
 * A token an e-mail carried (temporary access, e-mail verification) as Girder checks it: it exists, is the given
 * user's, has not expired and holds the scope. Null otherwise; each route answers a refusal with its own message.
 */
export async function mailedToken(
  deps: Deps,
  userId: string,
  token: string,
  scope: ScopeName,
): Promise<TokenDoc | null> {
  const doc = await deps.readModel.tokens.get(hashToken(token));
  const valid = doc?.userId === userId && Date.parse(doc.expires) > Date.now() && doc.scope.includes(scope);
  return valid ? doc : null;
}
