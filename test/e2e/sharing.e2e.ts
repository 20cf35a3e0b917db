import crypto from 'node:crypto';
import fs from 'node:fs';
import { describeInChromium } from './support/chromium';
import { useBrowserSuite } from './support/suite';
import { api, registerByApi } from './support/api';
import {
  addMetadata,
  createFolderHere,
  grantAccessTo,
  itemRow,
  logIn,
  logOut,
  openFolder,
  openMyFolders,
  register,
  uploadHere,
  openDialog,
} from './support/journeys';

/** The id after `<model>/` in the client's URL (`#user/<id>/folder/<id>`, `#item/<id>`, `#group/<id>/…`). */
function idIn(url: string, model: string): string {
  const match = new RegExp(`${model}/([0-9a-f]{24})`).exec(url);
  if (!match) throw new Error(`No ${model} id in ${url}`);
  return match[1];
}

describeInChromium('web client: files, metadata, sharing and search', () => {
  const ui = useBrowserSuite();
  const small = Buffer.from('hello, folder service\n');
  // Uploaded in 64 KiB chunks: five chunks, the last one short.
  const large = crypto.randomBytes(300 * 1024);
  let sharedId = '';
  let aliceToken = '';

  it('records an error toast (the recorder the journeys rely on works)', async () => {
    await ui.session.goto();
    await ui.session.page.evaluate("window.girder.events.trigger('g:alert', { type: 'danger', text: 'probe toast' })");
    await ui.session.page.locator('.alert-danger', { hasText: 'probe toast' }).waitFor();
    expect(ui.session.problems).toEqual(['error toast: × probe toast']);
    ui.session.problems.length = 0;
  });

  it('uploads files (one of them in several chunks) and downloads them byte for byte', async () => {
    const { page } = ui.session;
    await ui.session.step('register and open Public', async () => {
      await register(ui.session, 'alice');
      aliceToken = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      await openMyFolders(ui.session);
      // Under Public, so that others can walk to it (every ancestor must be readable, as in Girder); the access
      // dialog makes it private below.
      await openFolder(ui.session, 'Public');
      await createFolderHere(ui.session, 'Shared');
      await openFolder(ui.session, 'Shared');
      sharedId = idIn(page.url(), 'folder');
    });
    await ui.session.step('upload', async () => {
      await uploadHere(ui.session, [{ name: 'small.txt', mimeType: 'text/plain', buffer: small }]);
      // Several chunks from a 300 KiB file: 64 KiB chunks, below Girder's 5 MiB minimum for a chunk that does not end
      // its upload, so alice (the site administrator: the first account) lowers the minimum first, as an admin would.
      await page.evaluate(
        "Promise.resolve(window.girder.rest.restRequest({ url: 'system/setting', method: 'PUT', data: { key: 'core.upload_minimum_chunk_size', value: '0' } })).then(() => true)",
      );
      await page.evaluate('window.girder.rest.setUploadChunkSize(64 * 1024)');
      await uploadHere(ui.session, [{ name: 'large.bin', mimeType: 'application/octet-stream', buffer: large }]);
      await itemRow(ui.session, 'small.txt').waitFor();
      await itemRow(ui.session, 'large.bin').waitFor();
    });
    for (const [name, bytes] of [
      ['small.txt', small],
      ['large.bin', large],
    ] as const) {
      await ui.session.step(`download ${name}`, async () => {
        await itemRow(ui.session, name).locator('.g-item-list-link').click();
        await page.locator('.g-file-list-link', { hasText: name }).waitFor();
        await ui.session.idle();
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.locator('.g-file-list-link', { hasText: name }).click(),
        ]);
        expect(Buffer.compare(fs.readFileSync(await download.path()), bytes)).toBe(0);
        await page.goBack();
        await itemRow(ui.session, name).waitFor();
        await ui.session.idle();
      });
    }
  });

  it('edits folder and item metadata', async () => {
    const { page } = ui.session;
    await ui.session.step('folder metadata', async () => {
      await addMetadata(ui.session, 'project', 'apollo');
      expect((await api(ui.service.baseUrl, 'GET', `folder/${sharedId}`, aliceToken)).metadata).toEqual({
        project: 'apollo',
      });
      // Read back from the server, not only as the widget left it.
      await page.reload();
      await page.locator('.g-widget-metadata-row', { hasText: 'apollo' }).waitFor();
      await ui.session.idle();
    });
    await ui.session.step('item metadata', async () => {
      await itemRow(ui.session, 'small.txt').locator('.g-item-list-link').click();
      await page.locator('.g-file-list-link').first().waitFor();
      await ui.session.idle();
      await addMetadata(ui.session, 'kind', 'greeting');
      const itemId = idIn(page.url(), 'item');
      expect((await api(ui.service.baseUrl, 'GET', `item/${itemId}`, aliceToken)).metadata).toEqual({
        kind: 'greeting',
      });
      await page.reload();
      await page.locator('.g-widget-metadata-row', { hasText: 'greeting' }).waitFor();
      await ui.session.idle();
      await page.goBack();
      await itemRow(ui.session, 'small.txt').waitFor();
      await ui.session.idle();
    });
  });

  it('shares a folder with a user and a group through the access dialog; both then see it', async () => {
    const { page } = ui.session;
    await registerByApi(ui.service.baseUrl, 'bobby');
    const carol = await registerByApi(ui.service.baseUrl, 'carol');
    await ui.session.step('create a group', async () => {
      await ui.session.goto('groups');
      await openDialog(ui.session, () => page.locator('.g-group-create-button').click());
      await page.locator('#g-name').fill('Team');
      await page.locator('.g-save-group').click();
      await page.locator('.g-group-name', { hasText: 'Team' }).waitFor();
      await ui.session.idle();
      const groupId = idIn(page.url(), 'group');
      // Alice is a site administrator: she may add Carol directly.
      await api(ui.service.baseUrl, 'POST', `group/${groupId}/invitation`, aliceToken, {
        userId: carol._id,
        force: 'true',
      });
    });
    await ui.session.step('share', async () => {
      await ui.session.goto(`folder/${sharedId}`);
      await openDialog(ui.session, () => page.locator('.g-folder-access-button').click());
      await page.locator('#g-access-private').check();
      await grantAccessTo(ui.session, 'bobby', 'bobby');
      await grantAccessTo(ui.session, 'Team', 'Team');
      await page.locator('#g-ac-list-users .g-user-access-entry', { hasText: 'bobby' }).waitFor();
      await page.locator('#g-ac-list-groups .g-group-access-entry', { hasText: 'Team' }).waitFor();
      await page.locator('.g-save-access-list').click();
      await page.locator('#g-dialog-container .modal-dialog').waitFor({ state: 'hidden' });
      await ui.session.idle();
      const access = await api(ui.service.baseUrl, 'GET', `folder/${sharedId}/access`, aliceToken);
      expect(access.users.map((u: { login: string }) => u.login).sort()).toEqual(['alice', 'bobby']);
      expect(access.groups.map((g: { name: string }) => g.name)).toEqual(['Team']);
      expect((await api(ui.service.baseUrl, 'GET', `folder/${sharedId}`, aliceToken)).public).toBe(false);
      await logOut(ui.session);
    });
    for (const login of ['bobby', 'carol']) {
      await ui.session.step(`${login} sees the shared folder`, async () => {
        await logIn(ui.session, login);
        await ui.session.goto(`folder/${sharedId}`);
        await page.locator('.g-hierarchy-breadcrumb-bar .breadcrumb .active', { hasText: 'Shared' }).waitFor();
        await itemRow(ui.session, 'large.bin').waitFor();
        if (login === 'bobby') {
          await page.locator('.g-quick-search-container .g-search-field').fill('large');
          await page.locator('.g-quick-search-container .g-search-result-element', { hasText: 'large.bin' }).waitFor();
          await page.locator('.g-quick-search-container .g-search-field').fill('');
        }
        await logOut(ui.session);
      });
    }
  });
});
