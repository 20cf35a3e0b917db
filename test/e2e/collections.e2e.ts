import fs from 'node:fs';
import type { Download } from 'playwright-core';
import { readZip } from '../support/readZip';
import { api, registerByApi } from './support/api';
import { describeInChromium } from './support/chromium';
import {
  addMetadata,
  confirm,
  createFolderHere,
  folderAction,
  folderRow,
  grantAccessTo,
  openDialog,
  openFolder,
  register,
  uploadHere,
} from './support/journeys';
import { useBrowserSuite } from './support/suite';

/** The names and bytes in a downloaded zip. */
async function zipContents(download: Download): Promise<Record<string, string>> {
  const entries = await readZip(fs.readFileSync(await download.path()));
  return Object.fromEntries(entries.map((entry) => [entry.name, entry.data.toString()]));
}

/** Collections: create, metadata (add, edit, delete), the collection's download and "Download checked resources", access. */
describeInChromium('web client: collections', () => {
  const ui = useBrowserSuite();
  const note = 'a note in a collection\n';
  let collectionId = '';
  let token = '';

  it('creates a collection with a folder and a file; adds, edits and deletes its metadata', async () => {
    const { page } = ui.session;
    const metadata = async () => (await api(ui.service.baseUrl, 'GET', `collection/${collectionId}`, token)).meta;
    await ui.session.step('create', async () => {
      await ui.session.goto();
      await register(ui.session, 'curator');
      token = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      await page.locator('.g-nav-link[g-target="collections"]').click();
      await openDialog(ui.session, () => page.locator('.g-collection-create-button').click());
      await page.locator('#g-name').fill('Library');
      await page.locator('.g-save-collection').click();
      await page.locator('.g-collection-info-button').waitFor();
      await ui.session.idle();
      collectionId = /collection\/([0-9a-f]{24})/.exec(page.url())?.[1] ?? '';
      await createFolderHere(ui.session, 'Books');
      await openFolder(ui.session, 'Books');
      await uploadHere(ui.session, [{ name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from(note) }]);
      await ui.session.goto(`collection/${collectionId}`);
      await folderRow(ui.session, 'Books').waitFor();
    });
    // The only metadatum (by position: in edit mode its key is in an input, not in the row's text).
    const row = page.locator('.g-widget-metadata-row').first();
    await ui.session.step('add metadata', async () => {
      await addMetadata(ui.session, 'shelf', 'A1');
      expect(await metadata()).toEqual({ shelf: 'A1' });
      expect(await row.locator('.g-widget-metadata-key').textContent()).toBe('shelf');
    });
    await ui.session.step('edit metadata', async () => {
      await row.locator('.g-widget-metadata-edit-button').click();
      await row.locator('.g-widget-metadata-value-input').fill('B2');
      await row.locator('.g-widget-metadata-save-button').click();
      await row.locator('.g-widget-metadata-value', { hasText: 'B2' }).waitFor();
      await ui.session.idle();
      expect(await metadata()).toEqual({ shelf: 'B2' });
    });
    await ui.session.step('delete metadata', async () => {
      await row.locator('.g-widget-metadata-edit-button').click();
      await openDialog(ui.session, () => row.locator('.g-widget-metadata-delete-button').click());
      await confirm(ui.session);
      await row.waitFor({ state: 'detached' });
      expect(await metadata()).toEqual({});
    });
  });

  it('downloads the collection and the checked resources as zips', async () => {
    const { page } = ui.session;
    await ui.session.step('download the collection', async () => {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        folderAction(ui.session, '.g-download-folder'),
      ]);
      expect(download.suggestedFilename()).toBe('Library.zip');
      expect(await zipContents(download)).toEqual({ 'Library/Books/note.txt': note });
      await ui.session.idle();
    });
    await ui.session.step('download checked resources', async () => {
      await folderRow(ui.session, 'Books').locator('input.g-list-checkbox').check();
      await page.locator('.g-checked-actions-button').click();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('a.g-download-checked').click(),
      ]);
      expect(await zipContents(download)).toEqual({ 'Books/note.txt': note });
      await ui.session.idle();
    });
  });

  it('grants access to a user through the access control dialog', async () => {
    const { page } = ui.session;
    await registerByApi(ui.service.baseUrl, 'reader');
    await ui.session.step('access control', async () => {
      await openDialog(ui.session, () => page.locator('.g-edit-access').click());
      await grantAccessTo(ui.session, 'reader', 'reader');
      await page.locator('#g-ac-list-users .g-user-access-entry', { hasText: 'reader' }).waitFor();
      await page.locator('.g-save-access-list').click();
      await page.locator('#g-dialog-container .modal-dialog').waitFor({ state: 'hidden' });
      await ui.session.idle();
      const access = await api(ui.service.baseUrl, 'GET', `collection/${collectionId}/access`, token);
      expect(access.users.map((u: { login: string }) => u.login).sort()).toEqual(['curator', 'reader']);
    });
  });
});
