import { levelName, type Level } from '../domain/access';
import type { ParentType } from '../domain/parents';
import { type LoadedModels, type LoadedResources, type MissingModel, type ModelKind } from '../queries/models';

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

/** What a builder may set beyond the model and level (each optional key is left out when not given). */
type DeclOptions = Partial<Pick<ModelDeclBase, 'missing' | 'unless' | 'onlyWith' | 'note' | 'emptyMeansAbsent'>> &
  Pick<ModelDeclBase, 'othersSiteAdmin'>;

/** Whether a declaration with these options is loaded on every request (neither `unless` nor `onlyWith`). */
type AlwaysLoaded<O> = O extends { unless: string } | { onlyWith: string } ? false : true;

type ParentOptions = DeclOptions &
  Partial<Pick<ParentDecl, 'typeParam' | 'idParam' | 'orParentOf' | 'defaultType' | 'emptyMeansAbsent'>>;

function singleFrom<K extends ModelKind, R extends boolean>(
  kind: K,
  from: SingleModelDecl['from'],
  level: Level,
  required: R,
  options: DeclOptions,
): SingleModelDecl<K, R> {
  return { form: 'single', kind, from, required, level, missing: 'invalid-id', ...options };
}

function parentFrom<R extends boolean, T extends ModelKind>(
  level: Level,
  required: R,
  options: ParentOptions,
): ParentDecl<R, T> {
  return {
    form: 'parent',
    typeParam: 'parentType',
    idParam: 'parentId',
    required,
    level,
    missing: 'no-such',
    ...options,
  };
}

/**
 * Declaration builders, one per source of an id. Required and optional sources are separate builders so that the
 * handler's type says whether a model may be absent. (`NoInfer`: a parent's kinds come from the explicit type
 * argument or the default, never from the route table's context, which would widen them to every kind.)
 */
export const model = {
  /**
   * The route's `:id`: a miss is `Invalid <model> id (<id>).` With `unless` or `onlyWith` the handler's model may be
   * absent, and its type says so.
   */
  path: <K extends ModelKind, O extends DeclOptions = DeclOptions>(kind: K, level: Level, options?: O) =>
    singleFrom(
      kind,
      { in: 'path', name: 'id' },
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
  folderOr: (name: string, level: Level, orFolderOf: string) => ({
    ...singleFrom('folder', { in: 'param', name }, level, true, {}),
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
    missing: 'invalid-id',
    ...options,
  }),
};

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
