import { levelName, type Level, type Viewer } from '../domain/access';
import { ownValue } from '../domain/ownMap';
import type { ParentType } from '../domain/parents';
import type { ReadModelQueries } from '../ports/readModel';
import { AccessDeniedError, ValidationError } from '../domain/errors';
import {
  loadModelAt,
  type LoadedModels,
  type LoadedResources,
  type MissingModel,
  type ModelKind,
} from '../queries/models';

/**
 * A route's model parameters, declared beside its other parameters as Girder's `modelParam` is: where the id comes
 * from, which model it names and the level the caller needs. The request pipeline loads them, in declaration order,
 * after the parameters are parsed and before the handler runs, which receives the loaded models (`ctx.models`). The
 * OpenAPI document shows each declaration (`x-model`), and a test fails for a route that takes an id without one.
 */
interface ModelDeclBase {
  level: Level;
  missing: MissingModel;
  /** Loading is skipped when this parameter is given (its handler then reads another way, e.g. `at`). */
  unless?: string;
  /** Loading happens only when this parameter is given (the rule of that mode, e.g. ADMIN with `at`). */
  onlyWith?: string;
  /** What the rule means beyond model and level, for the OpenAPI document. */
  note?: string;
  /** An empty id counts as absent (Girder's truthiness tests in its find routes); else it is looked up and missed. */
  emptyMeansAbsent?: boolean;
  /** A user other than the caller needs a site administrator, checked before the lookup (`GET /api_key?userId=`). */
  othersSiteAdmin?: boolean;
}

/** One model named by a path token (`:id`) or a parameter. */
export interface SingleModelDecl<K extends ModelKind = ModelKind, R extends boolean = boolean> extends ModelDeclBase {
  form: 'single';
  kind: K;
  from: { in: 'path' | 'param'; name: string };
  required: R;
  /** Without the parameter, the folder of this earlier-declared item model (a copy next to its original). */
  orFolderOf?: string;
}

/** A parent named by a type parameter and an id parameter (`parentType` + `parentId`). */
export interface ParentDecl<R extends boolean = boolean, T extends ModelKind = ParentType> extends ModelDeclBase {
  form: 'parent';
  typeParam: string;
  idParam: string;
  required: R;
  /** Without the id parameter, the parent of this earlier-declared folder model (a copy into its own parent). */
  orParentOf?: string;
  /** The parent type when only the id parameter is given. */
  defaultType?: ParentType;
  /** Only in the type: the kinds the type parameter may name. */
  readonly kinds?: T;
}

/** A JSON resource set (`{"folder": [...], "item": [...]}`): every resource loaded at the level, each id once. */
export interface ResourceSetDecl extends ModelDeclBase {
  form: 'resources';
  param: string;
}

/**
 * An id whose model the route's own read checks, because it may name what the read model no longer holds (a removed
 * folder's history or restore): declared so the rule is still read here and in the OpenAPI document; loads nothing.
 */
export interface CheckedByReadDecl extends ModelDeclBase {
  form: 'checkedByRead';
  /** The model kind, or what names it (`the type parameter`). */
  kind: string;
  from: { in: 'path' | 'param'; name: string };
  note: string;
}

export type ModelDecl = SingleModelDecl | ParentDecl<boolean, ModelKind> | ResourceSetDecl | CheckedByReadDecl;
export type ModelDecls = Readonly<Record<string, ModelDecl>>;

/** A loaded parent of one of the kinds `T`: its type and document (a folder's parents: {@link LoadedParent}). */
type ParentOf<T extends ModelKind> = { [K in T]: { type: K; doc: LoadedModels[K] } }[T];

type LoadedOf<D> =
  D extends SingleModelDecl<infer K, infer R>
    ? R extends true
      ? LoadedModels[K]
      : LoadedModels[K] | undefined
    : D extends ParentDecl<infer R, infer T>
      ? R extends true
        ? ParentOf<T>
        : ParentOf<T> | undefined
      : D extends ResourceSetDecl
        ? LoadedResources
        : D extends CheckedByReadDecl
          ? undefined
          : never;

export type ModelsOf<M extends ModelDecls> = { [K in keyof M]: LoadedOf<M[K]> };

interface DeclOptions {
  missing?: MissingModel;
  othersSiteAdmin?: boolean;
  emptyMeansAbsent?: boolean;
  unless?: string;
  onlyWith?: string;
  note?: string;
}

/** Whether a declaration with these options is loaded on every request (neither `unless` nor `onlyWith`). */
type AlwaysLoaded<O> = O extends { unless: string } | { onlyWith: string } ? false : true;

type ParentOptions = DeclOptions & {
  typeParam?: string;
  idParam?: string;
  orParentOf?: string;
  /** The parent type when only the id parameter is given. */
  defaultType?: ParentType;
};

function singleFrom<K extends ModelKind, R extends boolean>(
  kind: K,
  from: SingleModelDecl['from'],
  level: Level,
  required: R,
  options: DeclOptions,
): SingleModelDecl<K, R> {
  return { form: 'single', kind, from, required, level, missing: options.missing ?? 'invalid-id', ...rest(options) };
}

function parentFrom<R extends boolean, T extends ModelKind>(
  level: Level,
  required: R,
  options: ParentOptions,
): ParentDecl<R, T> {
  return {
    form: 'parent',
    typeParam: options.typeParam ?? 'parentType',
    idParam: options.idParam ?? 'parentId',
    required,
    level,
    missing: options.missing ?? 'no-such',
    ...(options.orParentOf !== undefined ? { orParentOf: options.orParentOf } : {}),
    ...(options.defaultType !== undefined ? { defaultType: options.defaultType } : {}),
    ...rest(options),
  };
}

/**
 * Declaration builders, one per source of an id. Required and optional sources are separate builders so that the
 * handler's type says whether a model may be absent.
 */
export const model = {
  /**
   * The route's `:id` (or another path token): a miss is `Invalid <model> id (<id>).` With `unless` or `onlyWith` the
   * handler's model may be absent, and its type says so.
   */
  path: <K extends ModelKind, O extends DeclOptions & { token?: string } = DeclOptions>(
    kind: K,
    level: Level,
    options?: O,
  ) =>
    singleFrom(
      kind,
      { in: 'path', name: options?.token ?? 'id' },
      level,
      (options?.unless === undefined && options?.onlyWith === undefined) as AlwaysLoaded<O>,
      options ?? {},
    ),
  /** A required parameter naming one model. */
  param: <K extends ModelKind>(kind: K, name: string, level: Level, options: DeclOptions = {}) =>
    singleFrom(kind, { in: 'param', name }, level, true, options),
  /** An optional parameter naming one model: loaded when given (`emptyMeansAbsent`: and not empty). */
  optionalParam: <K extends ModelKind>(kind: K, name: string, level: Level, options: DeclOptions = {}) =>
    singleFrom(kind, { in: 'param', name }, level, false, options),
  /** A folder parameter that defaults to the folder of an earlier-declared item model: always loaded. */
  folderOr: (name: string, level: Level, orFolderOf: string, options: DeclOptions = {}) => ({
    ...singleFrom('folder', { in: 'param', name }, level, true, options),
    orFolderOf,
  }),
  /** `parentType` + `parentId` (Girder's `load(…, exc=True)`: a miss is `No such <type>: <id>`). */
  parent: <T extends ModelKind = ParentType>(level: Level, options: ParentOptions = {}): ParentDecl<true, NoInfer<T>> =>
    parentFrom<true, T>(level, true, options),
  /** An optional parent: loaded only when both parameters are given and not empty (or `orParentOf` supplies it). */
  optionalParent: <T extends ModelKind = ParentType>(
    level: Level,
    options: ParentOptions = {},
  ): ParentDecl<false, NoInfer<T>> => parentFrom<false, T>(level, false, { emptyMeansAbsent: true, ...options }),
  /** The route's `:id`, checked by the route's own read (see {@link CheckedByReadDecl}); `note` says the rule. */
  checkedByRead: (kind: ModelKind | 'named by the type parameter', level: Level, note: string): CheckedByReadDecl => ({
    form: 'checkedByRead',
    kind,
    from: { in: 'path', name: 'id' },
    level,
    missing: 'invalid-id',
    note,
  }),
  /** A resource set parameter, every resource at `level`. */
  resources: (param: string, level: Level, options: DeclOptions = {}): ResourceSetDecl => ({
    form: 'resources',
    param,
    level,
    missing: options.missing ?? 'invalid-id',
    ...rest(options),
  }),
};

function rest(
  options: DeclOptions,
): Pick<ModelDeclBase, 'unless' | 'onlyWith' | 'note' | 'emptyMeansAbsent' | 'othersSiteAdmin'> {
  return {
    ...(options.othersSiteAdmin !== undefined ? { othersSiteAdmin: options.othersSiteAdmin } : {}),
    ...(options.emptyMeansAbsent !== undefined ? { emptyMeansAbsent: options.emptyMeansAbsent } : {}),
    ...(options.unless !== undefined ? { unless: options.unless } : {}),
    ...(options.onlyWith !== undefined ? { onlyWith: options.onlyWith } : {}),
    ...(options.note !== undefined ? { note: options.note } : {}),
  };
}

/** The parameter and path names a declaration reads ids from (the route-table test checks every id is covered). */
export function declaredIdSources(decl: ModelDecl): { in: 'path' | 'param'; name: string }[] {
  switch (decl.form) {
    case 'single':
    case 'checkedByRead':
      return [decl.from];
    case 'parent':
      return [{ in: 'param', name: decl.idParam }];
    case 'resources':
      return [{ in: 'param', name: decl.param }];
  }
}

/** The declaration as the OpenAPI document shows it (`x-model` on the parameter carrying the id). */
export function describeModelDecl(decl: ModelDecl): Record<string, unknown> {
  const model =
    decl.form === 'single' || decl.form === 'checkedByRead'
      ? decl.kind
      : decl.form === 'parent'
        ? `parent named by ${decl.typeParam}`
        : 'resource set';
  return {
    model,
    level: levelName(decl.level).toUpperCase(),
    ...(decl.unless !== undefined ? { unless: decl.unless } : {}),
    ...(decl.othersSiteAdmin ? { othersSiteAdmin: true } : {}),
    ...(decl.onlyWith !== undefined ? { onlyWith: decl.onlyWith } : {}),
    ...(decl.form === 'parent' && decl.orParentOf !== undefined ? { default: `the parent of ${decl.orParentOf}` } : {}),
    ...(decl.form === 'single' && decl.orFolderOf !== undefined ? { default: `the folder of ${decl.orFolderOf}` } : {}),
    ...(decl.note !== undefined ? { note: decl.note } : {}),
  };
}

interface LoadInput {
  readModel: ReadModelQueries;
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
  const { readModel, viewer, params } = input;
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
        return loadModelAt(readModel, decl.kind, id, viewer, decl.level, decl.missing);
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
        const doc = await loadModelAt(readModel, parentType, id, viewer, decl.level, decl.missing);
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
            const found = await loadModelAt(readModel, kind, id, viewer, decl.level, decl.missing);
            (out[kind] as unknown[]).push(found);
          }
        }
        return out;
      }
    }
  }
}
