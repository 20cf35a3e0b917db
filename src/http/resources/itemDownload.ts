import type { RouteDef } from '../routeTable';
import { model } from '../modelParams';
import { RESPONSE_SENT, route } from '../routeTable';
import { Scope } from '../../domain/scopes';
import type { Services } from '../../services';
import type { FileDoc } from '../../ports/readModel';
import { downloadHeaders, setDownloadHeaders } from '../downloadHeaders';
import { needsZip64, sanitizeRoot, sanitizeSegment, summarizeLayout, type ZipEntry } from '../../queries/zipLayout';
import { writeZip } from './folderDownload';
import { sendFile } from './file';
import { AccessLevel } from '../../domain/access';

const PAGE = 500;

async function* itemFiles(services: Services, itemId: string): AsyncGenerator<FileDoc> {
  for (let offset = 0; ; offset += PAGE) {
    const page = await services.readModel.files.listForItem(itemId, { limit: PAGE, offset, sort: '_id', sortdir: 1 });
    yield* page.rows;
    if (page.rows.length < PAGE) return;
  }
}

/**
 * `GET /item/:id/download` (Girder's Item.download, which the web client links from item rows): an item with exactly
 * one file sends that file; otherwise a zip of its files under a folder named after the item.
 */
export const itemDownloadRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: ':id/download',
    summary: 'Download the contents of an item.',
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    params: [],
    models: { target: model.path('item', AccessLevel.READ) },
    async handler({ models: { target }, services, principal, req, res }) {
      const { item } = target;
      const first = await services.readModel.files.listForItem(item._id, {
        limit: 2,
        offset: 0,
        sort: '_id',
        sortdir: 1,
      });
      if (first.total === 1)
        return sendFile(services, req, res, first.rows[0], principal, { offset: 0, disposition: 'attachment' });
      const root = sanitizeRoot(item.name);
      const entries = async function* (): AsyncGenerator<ZipEntry> {
        for await (const file of itemFiles(services, item._id))
          yield { entryPath: `${root}/${sanitizeSegment(file.name)}`, file };
      };
      const forceZip64 = needsZip64(await summarizeLayout(entries()));
      res.status(200);
      setDownloadHeaders(res, downloadHeaders({ filename: `${item.name}.zip`, mimeType: 'application/zip' }));
      if (req.method === 'HEAD') {
        res.end();
        return RESPONSE_SENT;
      }
      await writeZip(entries(), services.blobs, res, { forceZip64 });
      return RESPONSE_SENT;
    },
  }),
];
