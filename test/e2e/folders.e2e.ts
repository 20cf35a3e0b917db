import type { Browser } from 'playwright-core';
import { describeInChromium, launchChromium } from './support/chromium';
import { startLiveService, type LiveService } from './support/liveService';
import { GirderSession } from './support/girderPage';
import { addMetadata, createFolderHere, folderAction, folderRow, logIn, logOut, openFolder, openMyFolders, register, openDialog, confirm } from './support/journeys';

/** `YYYY-MM-DDTHH:MM:SS` in local time, what a datetime-local input takes. */
const localInput = (date: Date): string => new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 19);

describeInChromium('web client: accounts and folders', () => {
  let service: LiveService;
  let browser: Browser;
  let session: GirderSession;

  beforeAll(async () => {
    service = await startLiveService();
    browser = await launchChromium();
    session = await GirderSession.open(browser, service.baseUrl);
  });
  afterAll(async () => {
    await session?.close();
    await browser?.close();
    await service?.close();
  });
  afterEach(() => session.assertNoProblems());

  it('registers, browses My folders → Public, creates, renames, moves and deletes folders', async () => {
    const { page } = session;
    await session.step('register', async () => {
      await session.goto();
      await register(session, 'alice');
    });
    await session.step('browse to Public', async () => {
      await openMyFolders(session);
      await folderRow(session, 'Private').waitFor();
      await openFolder(session, 'Public');
    });
    await session.step('create', async () => {
      await createFolderHere(session, 'Alpha');
      await createFolderHere(session, 'Destination');
    });
    await session.step('rename', async () => {
      await openFolder(session, 'Alpha');
      await openDialog(session, () => folderAction(session, '.g-edit-folder'));
      await page.locator('#g-name').fill('Beta');
      await page.locator('.g-save-folder').click();
      await page.locator('.g-hierarchy-breadcrumb-bar .breadcrumb .active', { hasText: 'Beta' }).waitFor();
      await session.idle();
    });
    await session.step('move', async () => {
      await page.locator('.g-hierarchy-breadcrumb-bar .breadcrumb a', { hasText: 'Public' }).click();
      await folderRow(session, 'Beta').waitFor();
      await session.idle();
      await folderRow(session, 'Beta').locator('input.g-list-checkbox').check();
      await page.locator('.g-checked-actions-button').click();
      await page.locator('a.g-pick-checked').click();
      await openFolder(session, 'Destination');
      await page.locator('.g-checked-actions-button').click();
      await page.locator('a.g-move-picked').click();
      await folderRow(session, 'Beta').waitFor();
      await session.idle();
    });
    await session.step('delete', async () => {
      await openFolder(session, 'Beta');
      await folderAction(session, '.g-delete-folder');
      await confirm(session);
      await page.locator('.g-hierarchy-breadcrumb-bar .breadcrumb .active', { hasText: 'Destination' }).waitFor();
      await page.locator('.g-empty-parent-message').waitFor({ state: 'visible' });
    });
    await session.step('log out', async () => {
      await logOut(session);
    });
  });

  it('shows the Activity panel: the audit history, live updates, and the listing as of an earlier time', async () => {
    const { page } = session;
    await session.step('history', async () => {
      await logIn(session, 'alice');
      await openMyFolders(session);
      await openFolder(session, 'Public');
      await openFolder(session, 'Destination');
      await page.locator('.fs-activity-panel .fs-activity-entry', { hasText: 'FolderCreated' }).filter({ hasText: 'alice' }).waitFor();
    });
    const before = new Date();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await session.step('live update', async () => {
      await addMetadata(session, 'stage', 'draft');
      // Arrives over the folder's event stream: the panel does not reload its history.
      await page.locator('.fs-activity-panel .fs-activity-entry', { hasText: 'FolderMetadataChanged' }).waitFor();
      await createFolderHere(session, 'Later');
    });
    await session.step('view as of', async () => {
      const asOf = page.locator('.fs-activity-asof');
      await asOf.locator('.fs-activity-asof-input').fill(localInput(before));
      await asOf.locator('.fs-activity-asof-show').click();
      await asOf.locator('.fs-activity-asof-empty').waitFor();
      await asOf.locator('.fs-activity-asof-input').fill(localInput(new Date(Date.now() + 1000)));
      await asOf.locator('.fs-activity-asof-show').click();
      await asOf.locator('.fs-activity-asof-folder', { hasText: 'Later' }).waitFor();
      expect(await asOf.locator('.fs-activity-asof-folder').allTextContents()).toEqual(['Later']);
      await logOut(session);
    });
  });
});
