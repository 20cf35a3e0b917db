import type { FileDoc, ItemDoc } from '../ports/readModel';
import type { Viewer } from '../domain/access';
import { RestError } from '../domain/errors';
import type { Paging } from '../domain/paging';
import { SHA512_HEX } from '../domain/contentHashes';
import { fileView } from './itemQueries';
import type { ReadModelDeps } from './readDeps';

/** Read-side functions of the file routes (src/http/resources/file*.ts, item files); the read model's files only. */
type Deps = ReadModelDeps<'files'>;

/** A file re-read after a write (a concurrent delete may have removed it since). */
export async function currentFile(deps: Deps, id: string): Promise<FileDoc> {
  const doc = await deps.readModel.files.get(id);
  if (!doc) throw new RestError(`Invalid file id (${id}).`);
  return doc;
}

/** `GET /item/:id/files`: one page of the item's files. */
export async function itemFiles(
  deps: Deps,
  item: ItemDoc,
  paging: Paging,
  viewer: Viewer | null,
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  const page = await deps.readModel.files.listForItem(item._id, paging);
  return { rows: page.rows.map((file) => fileView(file, viewer)), total: page.total };
}

/** The item's file when it holds exactly one (downloaded as itself rather than as a zip), else null. */
export async function onlyFileOf(deps: Deps, item: ItemDoc): Promise<FileDoc | null> {
  const first = await deps.readModel.files.listForItem(item._id, { limit: 2, offset: 0, sort: '_id', sortdir: 1 });
  return first.total === 1 ? first.rows[0] : null;
}

/**
 * The files with this SHA-512 (any case) the viewer may read, by id (Girder's `find({algo: hash})` in natural order,
 * filtered by READ access). Only a 128-digit hex value can be a file's SHA-512: anything else matches nothing, without
 * a lookup.
 */
export async function readableWithSha512(
  deps: Deps,
  rawHash: string | undefined,
  viewer: Viewer | null,
  limit?: number,
): Promise<FileDoc[]> {
  const hash = (rawHash ?? '').toLowerCase();
  return SHA512_HEX.test(hash) ? deps.readModel.files.withSha512(hash, viewer, limit) : [];
}
