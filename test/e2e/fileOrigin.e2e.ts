import fs from 'node:fs';
import { describeInChromium } from './support/chromium';
import { useBrowserSuite } from './support/suite';
import { itemRow, openFolder, openMyFolders, register, uploadHere } from './support/journeys';

/**
 * FILE_ORIGIN in a browser (docs/security.md, "The file origin"): the web client at 127.0.0.1 downloads through
 * signed links on a second host name (`files.test`, mapped to 127.0.0.1 in Chromium), and a file shown there lives in
 * an origin that holds nothing of the session.
 */
const FILES_HOST = 'files.test';

describeInChromium('web client with a separate file origin', () => {
  const ui = useBrowserSuite({
    env: (port) => ({
      FILE_ORIGIN: `http://${FILES_HOST}:${port}`,
      FILE_URL_SECRET: 'an-e2e-secret-of-at-least-thirty-two-characters',
    }),
    chromiumArgs: [`--host-resolver-rules=MAP ${FILES_HOST} 127.0.0.1`],
  });
  const text = Buffer.from('<h1>plain notes</h1><script>document.title = "ran"</script>\n');
  const filesOrigin = () => ui.service.baseUrl.replace('127.0.0.1', FILES_HOST);

  it('downloads a file from the web client through a signed link on the file origin', async () => {
    const { page } = ui.session;
    const fileRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(filesOrigin())) fileRequests.push(request.url());
    });
    await ui.session.step('register and upload', async () => {
      await ui.session.goto();
      await register(ui.session, 'alice');
      await openMyFolders(ui.session);
      await openFolder(ui.session, 'Public');
      await uploadHere(ui.session, [{ name: 'notes.txt', mimeType: 'text/plain', buffer: text }]);
      await itemRow(ui.session, 'notes.txt').waitFor();
    });
    await ui.session.step('download from the item page', async () => {
      await itemRow(ui.session, 'notes.txt').locator('.g-item-list-link').click();
      await page.locator('.g-file-list-link', { hasText: 'notes.txt' }).waitFor();
      await ui.session.idle();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('.g-file-list-link', { hasText: 'notes.txt' }).click(),
      ]);
      expect(fs.readFileSync(await download.path())).toEqual(text);
      const token = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      expect(fileRequests).toHaveLength(1);
      const link = new URL(fileRequests[0]);
      expect([...link.searchParams.keys()]).toEqual(['user', 'expires', 'signature']);
      expect(fileRequests[0]).not.toContain(token);
    });
  });

  it('shows a file inline on the file origin, in an opaque origin without the session', async () => {
    const { page } = ui.session;
    const fileId = String(
      await page.evaluate(
        "window.girder.rest.restRequest({ url: 'item', data: { text: 'notes' } }).then((items) => window.girder.rest.restRequest({ url: 'item/' + items[0]._id + '/files' })).then((files) => files[0]._id)",
      ),
    );
    const viewer = await ui.session.context.newPage();
    try {
      await ui.session.step('open the inline link', async () => {
        await viewer.goto(`${ui.service.baseUrl}/api/v1/file/${fileId}/download?contentDisposition=inline`);
        await viewer.getByText('<h1>plain notes</h1>', { exact: false }).waitFor();
        expect(new URL(viewer.url()).origin).toBe(filesOrigin());
        expect(await viewer.evaluate('window.origin')).toBe('null');
        expect(await viewer.title()).not.toBe('ran');
      });
      await ui.session.step('nothing but downloads on the file origin', async () => {
        const response = await viewer.goto(`${filesOrigin()}/`);
        expect(response?.status()).toBe(404);
        // A browser asks for HTML: the error comes as Girder renders JSON for it.
        expect(await viewer.locator('body').textContent()).toContain(
          '"message":\u00a0"Only\u00a0file\u00a0downloads\u00a0are\u00a0served\u00a0on\u00a0the\u00a0file\u00a0origin."',
        );
      });
    } finally {
      await viewer.close();
    }
  });
});
