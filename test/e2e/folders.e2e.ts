import type { Browser } from 'playwright-core';
import { describeInChromium, launchChromium } from './support/chromium';
import { startLiveService, type LiveService } from './support/liveService';
import { GirderSession } from './support/girderPage';
import { createFolderHere, folderAction, folderRow, logOut, openFolder, openMyFolders, register, openDialog, confirm } from './support/journeys';

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
});
