import type { Locator } from 'playwright-core';
import type { GirderSession } from './girderPage';

/** UI actions of the Girder web client, as its own Playwright helpers (girder/web/tests/util.ts) perform them. */

/**
 * Opens a dialog and waits until Bootstrap has shown it: at that moment it moves the focus into the dialog (and the
 * client into its first field), so typing any earlier could land in the wrong field.
 */
export async function openDialog(session: GirderSession, open: () => Promise<void>): Promise<void> {
  await open();
  await session.page.waitForFunction(
    "(() => { const d = document.getElementById('g-dialog-container'); return !!d && d.classList.contains('in') && d.contains(document.activeElement); })()",
  );
  await session.idle();
}

export async function register(session: GirderSession, login: string, password = 'password1'): Promise<void> {
  const { page } = session;
  await openDialog(session, () => page.locator('.g-register').click());
  await page.locator('#g-login').fill(login);
  await page.locator('#g-email').fill(`${login}@example.com`);
  await page.locator('#g-firstName').fill('First');
  await page.locator('#g-lastName').fill(login);
  await page.locator('#g-password').fill(password);
  await page.locator('#g-password2').fill(password);
  await page.locator('#g-register-button').click();
  await page.locator('.g-user-dropdown-link').filter({ hasText: login }).waitFor();
  await session.idle();
}

export async function logIn(session: GirderSession, login: string, password = 'password1'): Promise<void> {
  const { page } = session;
  await openDialog(session, () => page.locator('.g-login').click());
  await page.locator('#g-login').fill(login);
  await page.locator('#g-password').fill(password);
  await page.locator('#g-login-button').click();
  await page.locator('.g-user-dropdown-link').filter({ hasText: login }).waitFor();
  await session.idle();
}

export async function logOut(session: GirderSession): Promise<void> {
  const { page } = session;
  await page.locator('.g-user-dropdown-link').click();
  await page.locator('.g-logout').click();
  await page.locator('.g-login').waitFor();
  await session.idle();
}

export async function openMyFolders(session: GirderSession): Promise<void> {
  const { page } = session;
  await page.locator('.g-user-dropdown-link').click();
  await page.locator('a.g-my-folders').click();
  await page.locator('.g-folder-list-link').first().waitFor();
  await session.idle();
}

/** A folder or item row of the current listing, by exact name. */
export const folderRow = (session: GirderSession, name: string): Locator =>
  session.page
    .locator('.g-folder-list-entry')
    .filter({ has: session.page.locator('.g-folder-list-link', { hasText: new RegExp(`^\\s*${name}\\s*$`) }) });
export const itemRow = (session: GirderSession, name: string): Locator =>
  session.page
    .locator('.g-item-list-entry')
    .filter({ has: session.page.locator('.g-item-list-link', { hasText: new RegExp(`^\\s*${name}\\s*$`) }) });

export async function openFolder(session: GirderSession, name: string): Promise<void> {
  await folderRow(session, name).locator('.g-folder-list-link').click();
  await session.page.locator('.g-hierarchy-breadcrumb-bar .breadcrumb .active', { hasText: name }).waitFor();
  await session.idle();
}

export async function folderAction(session: GirderSession, action: string): Promise<void> {
  await session.page.locator('.g-folder-actions-button').click();
  await session.page.locator(`.g-folder-actions-menu ${action}`).click();
}

export async function createFolderHere(session: GirderSession, name: string): Promise<void> {
  const { page } = session;
  await openDialog(session, () => folderAction(session, '.g-create-subfolder'));
  await page.locator('#g-name').fill(name);
  await page.locator('.g-save-folder').click();
  await folderRow(session, name).waitFor();
  await session.idle();
}

/** Confirms Girder's confirmation dialog. */
export async function confirm(session: GirderSession): Promise<void> {
  await session.page.locator('#g-confirm-button').click();
  await session.idle();
}

/**
 * Uploads files (given as bytes, or as paths of files on disk: large ones) into the current folder through the upload
 * dialog and waits until it has finished.
 */
export async function uploadHere(
  session: GirderSession,
  files: { name: string; mimeType: string; buffer: Buffer }[] | string[],
): Promise<void> {
  const { page } = session;
  await page.locator('.g-upload-here-button').first().click();
  await page.locator('.g-drop-zone').waitFor();
  await page.locator('#g-files').setInputFiles(files);
  await page.locator('.g-start-upload').click();
  await page.locator('.g-start-upload').waitFor({ state: 'hidden' });
  await session.idle();
}

/** Adds a simple key/value to the metadata widget of the current folder or item page. */
export async function addMetadata(session: GirderSession, key: string, value: string): Promise<void> {
  const { page } = session;
  await page.locator('.g-widget-metadata-add-button').click();
  await page.locator('.g-add-simple-metadata').click();
  await page.locator('.g-widget-metadata-key-input').last().fill(key);
  await page.locator('.g-widget-metadata-value-input').last().fill(value);
  await page.locator('.g-widget-metadata-save-button').last().click();
  await page.locator('.g-widget-metadata-row', { hasText: key }).waitFor();
  await session.idle();
}

/** Picks a user or group in the access dialog's search field. */
export async function grantAccessTo(session: GirderSession, query: string, resultText: string): Promise<void> {
  const { page } = session;
  const field = page.locator('.g-grant-access-container .g-search-field');
  await field.fill(query);
  await page.locator('.g-grant-access-container .g-search-result-element', { hasText: resultText }).first().click();
  await session.idle();
}
