import { api, registerByApi } from './support/api';
import { describeInChromium } from './support/chromium';
import {
  addMetadata,
  confirm,
  createFolderHere,
  itemRow,
  openDialog,
  openFolder,
  openMyFolders,
  register,
  uploadHere,
} from './support/journeys';
import { useBrowserSuite } from './support/suite';

/**
 * Groups (create, invite, add, promote, remove), the quick search in prefix mode, and the item page's edits: rename the
 * item, its metadata, rename its file; then a copy of the item through the picked resources (the client offers no copy
 * or move of a single file).
 */
describeInChromium('web client: groups, search, item and file edits', () => {
  const ui = useBrowserSuite();
  let token = '';

  it('creates a group, invites a user, adds one, promotes and removes them', async () => {
    const { page } = ui.session;
    const members = page.locator('.g-group-members-container .g-group-members > li');
    const selectUser = async (login: string): Promise<void> => {
      await page.locator('.g-group-invite-container .g-search-field').fill(login);
      await openDialog(ui.session, () =>
        page.locator('.g-group-invite-container .g-search-result-element', { hasText: login }).first().click(),
      );
    };
    await ui.session.step('create a group', async () => {
      await ui.session.goto();
      await register(ui.session, 'owner');
      token = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      await registerByApi(ui.service.baseUrl, 'invitee');
      await registerByApi(ui.service.baseUrl, 'joiner');
      await page.locator('.g-nav-link[g-target="groups"]').click();
      await openDialog(ui.session, () => page.locator('.g-group-create-button').click());
      await page.locator('#g-name').fill('Team');
      await page.locator('.g-save-group').click();
      await page.locator('.g-group-name', { hasText: 'Team' }).waitFor();
      await ui.session.idle();
    });
    await ui.session.step('invite', async () => {
      await selectUser('invitee');
      await page.locator('.g-invite-as-member').click();
      await page.locator('#g-dialog-container .modal-dialog').waitFor({ state: 'hidden' });
      await ui.session.idle();
      await page.locator('.g-group-tabs a[name="pending"]').click();
      await page.locator('.g-group-invites-body', { hasText: 'invitee' }).waitFor();
      await page.locator('.g-group-tabs a[name="roles"]').click();
    });
    await ui.session.step('add and promote a member', async () => {
      await selectUser('joiner');
      await page.locator('.g-add-as-member').click();
      await members.filter({ hasText: 'joiner' }).waitFor();
      await ui.session.idle();
      await members.filter({ hasText: 'joiner' }).locator('.g-group-member-promote').click();
      await members.filter({ hasText: 'joiner' }).locator('.g-promote-moderator').click();
      await page.locator('.g-group-mods-container', { hasText: 'joiner' }).waitFor();
      await ui.session.idle();
    });
    await ui.session.step('remove a member', async () => {
      const groupId = /group\/([0-9a-f]{24})/.exec(page.url())?.[1] ?? '';
      const before: { login: string }[] = await api(ui.service.baseUrl, 'GET', `group/${groupId}/member`, token);
      expect(before.map((m) => m.login).sort()).toEqual(['joiner', 'owner']);
      await openDialog(ui.session, () =>
        page.locator('.g-group-mods-container li', { hasText: 'joiner' }).locator('.g-group-mod-remove').click(),
      );
      await confirm(ui.session);
      await page.locator('.g-group-mods-container li', { hasText: 'joiner' }).waitFor({ state: 'detached' });
      const after: { login: string }[] = await api(ui.service.baseUrl, 'GET', `group/${groupId}/member`, token);
      expect(after.map((m) => m.login)).toEqual(['owner']);
    });
  });

  it('finds folders, items and collections by prefix in the quick search', async () => {
    const { page } = ui.session;
    await ui.session.step('set up and search', async () => {
      await api(ui.service.baseUrl, 'POST', 'collection', token, { name: 'Alpine', public: 'true' });
      await openMyFolders(ui.session);
      await openFolder(ui.session, 'Public');
      await createFolderHere(ui.session, 'Alphabet');
      await uploadHere(ui.session, [{ name: 'alpha.txt', mimeType: 'text/plain', buffer: Buffer.from('alpha\n') }]);
      const search = page.locator('.g-quick-search-container');
      await search.locator('.g-search-mode-choose').click();
      await search.locator('.g-search-mode-radio[value="prefix"]').click();
      await search.locator('.g-search-field').fill('alp');
      for (const name of ['Alpine', 'Alphabet', 'alpha.txt'])
        await search.locator('.g-search-result-element', { hasText: name }).waitFor();
      await ui.session.idle();
      await search.locator('.g-search-field').fill('');
    });
  });

  it('renames an item and its file, edits its metadata, and copies it through the picked resources', async () => {
    const { page } = ui.session;
    let itemId = '';
    await ui.session.step('rename the item', async () => {
      await itemRow(ui.session, 'alpha.txt').locator('.g-item-list-link').click();
      await page.locator('.g-file-list-link', { hasText: 'alpha.txt' }).waitFor();
      await ui.session.idle();
      itemId = /item\/([0-9a-f]{24})/.exec(page.url())?.[1] ?? '';
      await page.locator('.g-item-actions-button').click();
      await openDialog(ui.session, () => page.locator('.g-edit-item').click());
      await page.locator('#g-name').fill('letters');
      await page.locator('.g-save-item').click();
      await page.locator('.g-item-name', { hasText: 'letters' }).waitFor();
      await ui.session.idle();
    });
    await ui.session.step('item metadata', async () => {
      await addMetadata(ui.session, 'language', 'greek');
      expect((await api(ui.service.baseUrl, 'GET', `item/${itemId}`, token)).metadata).toEqual({ language: 'greek' });
    });
    await ui.session.step('rename the file', async () => {
      await openDialog(ui.session, () => page.locator('.g-file-list-entry .g-update-info').first().click());
      await page.locator('#g-file-edit-form #g-name').fill('alpha-letters.txt');
      await page.locator('.g-save-file').click();
      await page.locator('.g-file-list-link', { hasText: 'alpha-letters.txt' }).waitFor();
      await ui.session.idle();
      const [file] = await api(ui.service.baseUrl, 'GET', `item/${itemId}/files`, token);
      expect(file.name).toBe('alpha-letters.txt');
    });
    await ui.session.step('copy the item into a folder', async () => {
      await page.locator('.g-item-breadcrumb-container a', { hasText: 'Public' }).click();
      await itemRow(ui.session, 'letters').waitFor();
      await ui.session.idle();
      await itemRow(ui.session, 'letters').locator('input.g-list-checkbox').check();
      await page.locator('.g-checked-actions-button').click();
      await page.locator('a.g-pick-checked').click();
      await openFolder(ui.session, 'Alphabet');
      await page.locator('.g-checked-actions-button').click();
      await page.locator('a.g-copy-picked').click();
      await itemRow(ui.session, 'letters').waitFor();
      await ui.session.idle();
    });
  });
});
