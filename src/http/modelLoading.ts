import type { Viewer } from '../domain/access';
import { ownValue } from '../domain/ownMap';
import { AccessDeniedError, ValidationError } from '../domain/errors';
import { loadModelAt, type LoadedModels, type LoadedResources, type ModelKind } from '../queries/models';
import type { ReadModelDeps } from '../queries/readDeps';
import type { ModelDecl, ModelDecls, ModelsOf } from './modelParams';

/** Loading of a route's declared models (src/http/modelParams.ts), run by the request pipeline before the handler. */
interface LoadInput {
  /** What loading reads (the route's `services`): the read model only. */
  reads: ReadModelDeps;
  viewer: Viewer | null;
  params: Readonly<Record<string, unknown>>;
  path: Readonly<Record<string, string>>;
}

/** A parameter's parsed value as an id: empty strings count as absent, as Girder's truthiness tests do. */
function idValue(params: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = ownValue(params, name);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function stringValue(params: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = ownValue(params, name);
  return typeof value === 'string' ? value : undefined;
}

/**
 * An absent id: nothing to load for an optional declaration. A required one is declared with a required parameter,
 * whose parsing already refused the request; this is the same answer should the two ever disagree.
 */
function refuseMissingRequired(required: boolean, name: string): void {
  if (required) throw new ValidationError(`Parameter '${name}' is required.`, name);
}

/** Loads a route's declared models in declaration order; the first miss or refusal answers the request. */
export async function loadModels<M extends ModelDecls>(decls: M, input: LoadInput): Promise<ModelsOf<M>> {
  const { viewer, params } = input;
  const loaded = new Map<string, unknown>();
  for (const [key, decl] of Object.entries(decls)) {
    if (decl.unless !== undefined && ownValue(params, decl.unless) !== undefined) continue;
    if (decl.onlyWith !== undefined && ownValue(params, decl.onlyWith) === undefined) continue;
    loaded.set(key, await loadOne(decl, input, loaded));
  }
  // Each value was loaded by its own declaration's rule, so it has the type `ModelsOf` gives that declaration.
  return Object.fromEntries(loaded) as ModelsOf<M>;

  async function loadOne(decl: ModelDecl, { path }: LoadInput, earlier: Map<string, unknown>): Promise<unknown> {
    switch (decl.form) {
      case 'single': {
        let id =
          decl.from.in === 'path'
            ? ownValue(path, decl.from.name)
            : decl.emptyMeansAbsent
              ? idValue(params, decl.from.name)
              : stringValue(params, decl.from.name);
        if (id === undefined && decl.orFolderOf !== undefined)
          id = (earlier.get(decl.orFolderOf) as LoadedModels['item'] | undefined)?.item.folderId;
        if (id === undefined) {
          refuseMissingRequired(decl.required, decl.from.name);
          return undefined;
        }
        if (decl.othersSiteAdmin && id !== viewer?.id && !viewer?.admin)
          throw new AccessDeniedError('Administrator access required.');
        return loadModelAt(input.reads, decl.kind, id, viewer, decl.level, decl.missing);
      }
      case 'parent': {
        const type = ownValue(params, decl.typeParam) as ModelKind | undefined;
        let id = decl.emptyMeansAbsent ? idValue(params, decl.idParam) : stringValue(params, decl.idParam);
        let parentType: ModelKind | undefined = type ?? decl.defaultType;
        const source =
          decl.orParentOf !== undefined
            ? (earlier.get(decl.orParentOf) as LoadedModels['folder'] | undefined)
            : undefined;
        if (source) {
          id ??= source.parentId;
          parentType ??= source.parentCollection;
        }
        if (!parentType || id === undefined) {
          refuseMissingRequired(decl.required, decl.idParam);
          return undefined;
        }
        const doc = await loadModelAt(input.reads, parentType, id, viewer, decl.level, decl.missing);
        return { type: parentType, doc };
      }
      case 'checkedByRead':
        return undefined;
      case 'resources': {
        const set = (ownValue(params, decl.param) ?? {}) as Partial<Record<LoadedResources['order'][number], string[]>>;
        const order = Object.keys(set) as LoadedResources['order'];
        const out: LoadedResources = { folder: [], item: [], collection: [], user: [], order };
        // In the order the set names them (Girder iterates the request's JSON object).
        for (const kind of order) {
          for (const id of new Set(set[kind] ?? [])) {
            const found = await loadModelAt(input.reads, kind, id, viewer, decl.level, decl.missing);
            (out[kind] as unknown[]).push(found);
          }
        }
        return out;
      }
    }
  }
}
