import { describeInChromium } from './support/chromium';
import { useBrowserSuite } from './support/suite';
import {
  addMetadata,
  createFolderHere,
  folderAction,
  folderRow,
  logIn,
  logOut,
  openFolder,
  openMyFolders,
  register,
  openDialog,
  confirm,
} from './support/journeys';

/** `YYYY-MM-DDTHH:MM:SS` in local time, what a datetime-local input takes. */
const localInput = (date: Date): string =>
  new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 19);

describeInChromium('web client: accounts and folders', () => {
  const ui = useBrowserSuite();

  it('registers, browses My folders → Public, creates, renames, moves and deletes folders', async () => {
    const { page } = ui.session;
    await ui.session.step('register', async () => {
      await ui.session.goto();
      await register(ui.session, 'alice');
    });
    await ui.session.step('browse to Public', async () => {
      await openMyFolders(ui.session);
      await folderRow(ui.session, 'Private').waitFor();
      await openFolder(ui.session, 'Public');
    });
    await ui.session.step('create', async () => {
      await createFolderHere(ui.session, 'Alpha');
      await createFolderHere(ui.session, 'Destination');
    });
    await ui.session.step('rename', async () => {
      await openFolder(ui.session, 'Alpha');
      await openDialog(ui.session, () => folderAction(ui.session, '.g-edit-folder'));
      await page.locator('#g-name').fill('Beta');
      await page.locator('.g-save-folder').click();
      await page.locator('.g-hierarchy-breadcrumb-bar .breadcrumb .active', { hasText: 'Beta' }).waitFor();
      await ui.session.idle();
    });
    await ui.session.step('move', async () => {
      await page.locator('.g-hierarchy-breadcrumb-bar .breadcrumb a', { hasText: 'Public' }).click();
      await folderRow(ui.session, 'Beta').waitFor();
      await ui.session.idle();
      await folderRow(ui.session, 'Beta').locator('input.g-list-checkbox').check();
      await page.locator('.g-checked-actions-button').click();
      await page.locator('a.g-pick-checked').click();
      await openFolder(ui.session, 'Destination');
      await page.locator('.g-checked-actions-button').click();
      await page.locator('a.g-move-picked').click();
      await folderRow(ui.session, 'Beta').waitFor();
      await ui.session.idle();
    });
    await ui.session.step('delete', async () => {
      await openFolder(ui.session, 'Beta');
      await folderAction(ui.session, '.g-delete-folder');
      await confirm(ui.session);
      await page.locator('.g-hierarchy-breadcrumb-bar .breadcrumb .active', { hasText: 'Destination' }).waitFor();
      await page.locator('.g-empty-parent-message').waitFor({ state: 'visible' });
    });
    await ui.session.step('log out', async () => {
      await logOut(ui.session);
    });
  });

  it('shows the Activity panel: the audit history, live updates, and the listing as of an earlier time', async () => {
    const { page } = ui.session;
    await ui.session.step('history', async () => {
      await logIn(ui.session, 'alice');
      await openMyFolders(ui.session);
      await openFolder(ui.session, 'Public');
      await openFolder(ui.session, 'Destination');
      await page
        .locator('.fs-activity-panel .fs-activity-entry', { hasText: 'FolderCreated' })
        .filter({ hasText: 'alice' })
        .waitFor();
    });
    const before = new Date();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await ui.session.step('live update', async () => {
      await addMetadata(ui.session, 'stage', 'draft');
      // Arrives over the folder's event stream: the panel does not reload its history.
      await page.locator('.fs-activity-panel .fs-activity-entry', { hasText: 'FolderMetadataChanged' }).waitFor();
      await createFolderHere(ui.session, 'Later');
    });
    await ui.session.step('view as of', async () => {
      const asOf = page.locator('.fs-activity-asof');
      await asOf.locator('.fs-activity-asof-input').fill(localInput(before));
      await asOf.locator('.fs-activity-asof-show').click();
      await asOf.locator('.fs-activity-asof-empty').waitFor();
      await asOf.locator('.fs-activity-asof-input').fill(localInput(new Date(Date.now() + 1000)));
      await asOf.locator('.fs-activity-asof-show').click();
      await asOf.locator('.fs-activity-asof-folder', { hasText: 'Later' }).waitFor();
      expect(await asOf.locator('.fs-activity-asof-folder').allTextContents()).toEqual(['Later']);
      await logOut(ui.session);
    });
  });
});
