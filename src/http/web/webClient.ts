import fs from 'node:fs';
import path from 'node:path';
import express, { type Request, type Response } from 'express';
import { setPageHeaders } from '../pageHeaders';

/**
 * The Girder web client (`@girder/core`, a dependency: nothing is copied into this repository) served at `/`.
 * `dist-lib/girder-core.js` is one self-contained ES module (jQuery, Backbone, Bootstrap, Vue and fonts are bundled
 * into it and its CSS), so the page only needs it, its stylesheet and a boot script doing what Girder's own
 * `girder/web/src/main.ts` does: load the plugin static files, then `girder.initializeDefaultApp(apiRoot)`.
 */
const CLIENT_DIR = path.dirname(require.resolve('@girder/core'));
/** Where the client's files are served; the service's own browser files sit beside them. */
const WEB_ROOT = '/static';
const CLIENT_FILES = ['girder-core.js', 'girder-core.css', 'Girder_Favicon.png', 'Girder_Mark.png'];
/** This service's browser files, in the source tree (plain JS and CSS, served as is, also when running from dist/). */
const OWN_SCRIPTS_DIR = path.join(__dirname, '..', '..', '..', 'src', 'http', 'web', 'browser');

const INDEX_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <link rel="icon" type="image/png" href="${WEB_ROOT}/girder/Girder_Favicon.png" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <title>Folder Service</title>
    <link rel="stylesheet" href="${WEB_ROOT}/girder/girder-core.css" />
  </head>
  <body>
    <div id="app" root=""></div>
    <script type="module" src="${WEB_ROOT}/boot.js"></script>
  </body>
</html>
`;

/** Girder's main.ts, as plain JS: plugin CSS and scripts (in order, one after the other), then the app. */
const BOOT_JS = `import { girder } from '${WEB_ROOT}/girder/girder-core.js';
window.girder = girder;
// This service's folder and item records call Girder's \`meta\` field \`metadata\` (the folder REST interface);
// the client's models read \`meta\` (and are filled with \`set\`), so a record gets both as it arrives.
for (const Model of [girder.models.FolderModel, girder.models.ItemModel]) {
  const set = Model.prototype.set;
  Model.prototype.set = function (key, value, options) {
    if (key && typeof key === 'object' && key.metadata !== undefined && key.meta === undefined) key = { ...key, meta: key.metadata };
    return set.call(this, key, value, options);
  };
}
const apiRoot = '/api/v1';
const files = await (await fetch(apiRoot + '/system/plugin_static_files')).json();
const pluginRoot = window.location.origin + '/';
for (const href of files.css) {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL(href, pluginRoot).href;
  document.head.appendChild(link);
}
for (const src of files.js) {
  await new Promise((resolve) => {
    const script = document.createElement('script');
    script.src = new URL(src, pluginRoot).href;
    script.addEventListener('load', resolve);
    script.addEventListener('error', resolve);
    document.head.appendChild(script);
  });
}
await girder.initializeDefaultApp(apiRoot);
`;

/**
 * This service's browser files, which `/system/plugin_static_files` lists: the client loads the stylesheets, then the
 * scripts one after the other in this order (each user-quota script uses what the ones before it defined), before
 * the app starts. The Activity panel, and Girder's user_quota plugin's web part (user-quota-common.js says which
 * script does what).
 */
const OWN_SCRIPTS = [
  'activity-panel.js',
  'user-quota-common.js',
  'user-quota-models.js',
  'user-quota-dialog.js',
  'user-quota-menus.js',
  'user-quota-upload.js',
  'user-quota-config.js',
];
const OWN_STYLES = ['user-quota.css'];
export const OWN_PLUGIN_SCRIPTS = OWN_SCRIPTS.map((name) => `${WEB_ROOT}/${name}`);
export const OWN_PLUGIN_STYLES = OWN_STYLES.map((name) => `${WEB_ROOT}/${name}`);

const CONTENT_TYPES = new Map([
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.png', 'image/png'],
]);
const contentType = (name: string): string => CONTENT_TYPES.get(path.extname(name)) ?? 'application/octet-stream';

function sendFile(res: Response, file: string, type: string): void {
  res.type(type);
  fs.createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}

/** Routes for the page at `/` and its static files; mounted before the API's 404 handler. */
export function webClientRoutes(): express.Router {
  const router = express.Router();
  router.get('/', (_req: Request, res: Response) => {
    setPageHeaders(res);
    res.type('text/html; charset=utf-8').send(INDEX_HTML);
  });
  router.get(`${WEB_ROOT}/boot.js`, (_req, res) => {
    res.type('text/javascript; charset=utf-8').send(BOOT_JS);
  });
  for (const name of CLIENT_FILES) {
    const file = path.join(CLIENT_DIR, name);
    const type = contentType(name);
    router.get(`${WEB_ROOT}/girder/${name}`, (_req, res) => {
      // The bundle is 3.5 MB and changes only with the dependency's version: let browsers keep it for an hour.
      res.setHeader('Cache-Control', 'public, max-age=3600');
      res.removeHeader('Pragma');
      res.removeHeader('Expires');
      sendFile(res, file, type);
    });
  }
  // The client's header asks for its logo at the site root.
  router.get('/Girder_Mark.png', (_req, res) => sendFile(res, path.join(CLIENT_DIR, 'Girder_Mark.png'), 'image/png'));
  for (const name of [...OWN_SCRIPTS, ...OWN_STYLES]) {
    router.get(`${WEB_ROOT}/${name}`, (_req, res) =>
      sendFile(res, path.join(OWN_SCRIPTS_DIR, name), contentType(name)),
    );
  }
  return router;
}
