import fs from 'node:fs';
import path from 'node:path';
import { api, registerByApi } from './support/api';
import { describeInChromium } from './support/chromium';
import { ARTIFACTS_DIR } from './support/girderPage';
import { logIn, logOut, openDialog, openFolder, openMyFolders, register, uploadHere } from './support/journeys';
import { useBrowserSuite } from './support/suite';

const MB = 1024 * 1024;

/**
 * Girder's user_quota plugin in the web client (src/http/web/browser/user-quota-*.js): an administrator sets a user's
 * quota in the dialog of the user page's action menu, the user sees it and an upload over it is refused in the upload
 * dialog with the plugin's message; the default quotas on the plugin's configuration page (linked from the plugin
 * list); a collection's quota, and a refused value.
 */
describeInChromium('web client: quotas (user_quota)', () => {
  const ui = useBrowserSuite();
  let adminToken = '';
  let ursula = { _id: '', token: '' };

  const shot = async (name: string): Promise<void> => {
    fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
    await ui.session.page.screenshot({ path: path.join(ARTIFACTS_DIR, `quota-${name}.png`) });
  };
  /** Opens the quota dialog from the action menu of the user or collection page shown; the menu item's label. */
  const openQuotaDialog = async (kind: 'user' | 'collection'): Promise<string> => {
    const { page } = ui.session;
    let label = '';
    await openDialog(ui.session, async () => {
      await page.locator(`.g-${kind}-actions-button`).click();
      label = (await page.locator(`a.g-${kind}-policies`).textContent()) ?? '';
      await page.locator(`a.g-${kind}-policies`).click();
    });
    return label;
  };
  const dialog = () => ui.session.page.locator('#g-dialog-container');
  const closeDialog = async (button: string): Promise<void> => {
    await dialog().locator(button).click();
    await ui.session.page.locator('#g-dialog-container.in').waitFor({ state: 'detached' });
    await ui.session.page.waitForFunction("!document.querySelector('.modal-backdrop')");
    await ui.session.idle();
  };
  /** The problems a refused request leaves: its 400 and Chromium's console line about it, and nothing else. */
  const takeRefusal = (method: string, route: RegExp): void => {
    const seen = ui.session.problems.splice(0);
    expect(seen).toEqual([
      expect.stringMatching(new RegExp(`^HTTP 400 ${method} http://[^ ]+/api/v1/${route.source}`)),
      'console error: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
  };
  /**
   * An upload refused at its start leaves more: Girder's client starts uploads without `error: null` (FileModel), so
   * its default handler also logs the answer and shows its generic toast, besides the message in the upload dialog.
   */
  const takeRefusedUpload = (message: string): void => {
    const seen = ui.session.problems.splice(0);
    const body = JSON.stringify({ field: 'size', message, type: 'validation' });
    expect(seen).toEqual([
      expect.stringMatching(/^HTTP 400 POST http:\/\/[^ ]+\/api\/v1\/file(: |$)/),
      'console error: Failed to load resource: the server responded with a status of 400 (Bad Request)',
      `console error: 400 Bad Request ${body}`,
      'error toast: × An error occurred while communicating with the server. Details have been logged in the console.',
    ]);
  };

  it("sets a user's quota; the user sees it and an upload over it is refused", async () => {
    const { page } = ui.session;
    await ui.session.step('the administrator opens the quota dialog on a user page', async () => {
      await ui.session.goto();
      await register(ui.session, 'admin');
      adminToken = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      ursula = await registerByApi(ui.service.baseUrl, 'ursula');
      await ui.session.goto(`user/${ursula._id}`);
      await page.locator('.g-user-name', { hasText: 'First ursula' }).waitFor();
      expect(await openQuotaDialog('user')).toBe('Quota and assetstore policies');
      expect(await dialog().locator('.modal-title').textContent()).toBe(
        'Quota and Assetstore Policies for First ursula',
      );
      expect(await dialog().locator('.g-quota-capacity').textContent()).toBe(' Unlimited');
      expect(
        (await dialog().locator('label[for="g-user-quota-size-value"] ~ .radio').first().textContent())?.trim(),
      ).toBe('Use the default quota: Unlimited');
      expect(await dialog().locator('#g-defaultQuota').isChecked()).toBe(true);
      expect(await dialog().locator('#g-preferredAssetstore option').allTextContents()).toEqual([
        'Current Assetstore',
        'Default',
      ]);
      expect(page.url()).toMatch(/#user\/[0-9a-f]{24}\?dialog=quota$/);
    });
    await ui.session.step('sets a specific quota of 1 MB', async () => {
      await dialog().locator('#g-user-quota-size-value').fill('1');
      // Typing a size chooses "a specific quota".
      expect(await dialog().locator('#g-customQuota').isChecked()).toBe(true);
      await dialog().locator('#g-user-quota-size-units').selectOption({ label: 'MB' });
      await shot('user-dialog-admin');
      await closeDialog('.g-save-policies');
      const { quota } = await api(ui.service.baseUrl, 'GET', `user/${ursula._id}/quota`, adminToken);
      expect(quota).toEqual({
        fileSizeQuota: MB,
        useQuotaDefault: false,
        preferredAssetstore: null,
        fallbackAssetstore: null,
        _currentFileSizeQuota: MB,
      });
      expect(page.url()).toMatch(/#user\/[0-9a-f]{24}$/);
    });
    await ui.session.step('the user sees the quota in the dialog of their own page', async () => {
      await logOut(ui.session);
      await logIn(ui.session, 'ursula');
      await openMyFolders(ui.session);
      await openFolder(ui.session, 'Private');
      await uploadHere(ui.session, [
        { name: 'small.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(256 * 1024, 1) },
      ]);
      await openMyFolders(ui.session);
      expect(await openQuotaDialog('user')).toBe('Quota');
      expect(await dialog().locator('.modal-title').textContent()).toBe('Quota for First ursula');
      expect(await dialog().locator('.g-quota-capacity').textContent()).toBe(' 768.0 kB free of 1.000 MB');
      expect(await dialog().locator('.g-quota-legend li').allTextContents()).toEqual([
        'Used (256.0 kB)',
        'Free (768.0 kB)',
      ]);
      // Only an administrator edits the policy.
      expect(await dialog().locator('#g-user-quota-size-value, .g-save-policies').count()).toBe(0);
      await shot('user-dialog-owner');
      await closeDialog('[data-dismiss="modal"].btn');
    });
    await ui.session.step('an upload over the quota is refused with the plugin message', async () => {
      await openFolder(ui.session, 'Private');
      await page.locator('.g-upload-here-button').first().click();
      await page.locator('.g-drop-zone').waitFor();
      await page
        .locator('#g-files')
        .setInputFiles([{ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(MB, 2) }]);
      await page.locator('.g-start-upload').click();
      const message = page.locator('.g-upload-error-message');
      await message.locator('.g-restart-upload').waitFor();
      await ui.session.idle();
      const refusal =
        'Upload would exceed file storage quota (need 1.000 MB, only 768.0 kB available - used 256.0 kB out of ' +
        '1.000 MB)';
      expect(await message.textContent()).toBe(`Error: ${refusal} Click to restart upload`);
      // The plugin shows the drop zone again, for smaller files.
      await page.locator('.g-drop-zone:not(.hide)').waitFor();
      await shot('upload-refused');
      takeRefusedUpload(refusal);
      const files = await api(ui.service.baseUrl, 'GET', `user/${ursula._id}`, ursula.token);
      expect(files.size).toBe(256 * 1024);
    });
  });

  it('sets the default quotas on the plugin configuration page, linked from the plugin list', async () => {
    const { page } = ui.session;
    await ui.session.step('the plugin list links to the configuration page', async () => {
      await ui.session.goto();
      await logOut(ui.session);
      await logIn(ui.session, 'admin');
      // Logging out ended the first session's token.
      adminToken = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      await page.locator('.g-nav-link[g-target="admin"]').click();
      await page.locator('.g-plugins-config').click();
      const plugin = page.locator('.g-plugin-list-item[data-name="user_quota"]');
      await plugin.waitFor();
      await ui.session.idle();
      expect((await plugin.locator('.g-plugin-name span').first().textContent())?.trim()).toBe(
        'User and Collection Quotas',
      );
      await plugin.locator('a.g-plugin-config-link').click();
      await page.locator('#g-user-quota-form').waitFor();
      await ui.session.idle();
      expect(page.url()).toMatch(/#plugins\/user_quota\/config$/);
      expect(await page.locator('.g-config-breadcrumb-container .active').textContent()).toContain(
        'User and collection quotas and policies',
      );
      expect(await page.locator('#g-user-quota-user-size-value').inputValue()).toBe('');
    });
    await ui.session.step('saves 2 GB for users and 500 MB for collections', async () => {
      await page.locator('#g-user-quota-user-size-value').fill('2');
      await page.locator('#g-user-quota-user-size-units').selectOption({ label: 'GB' });
      // A suffix typed after the number wins over the units menu.
      await page.locator('#g-user-quota-collection-size-value').fill('500M');
      await shot('config');
      await page.locator('#g-user-quota-form input[type="submit"]').click();
      await page.locator('.alert-success', { hasText: 'Settings saved.' }).waitFor();
      await ui.session.idle();
      const settings = await api(
        ui.service.baseUrl,
        'GET',
        `system/setting?list=${encodeURIComponent('["user_quota.default_user_quota","user_quota.default_collection_quota"]')}`,
        adminToken,
      );
      expect(settings).toEqual({
        'user_quota.default_user_quota': 2 * 1024 * MB,
        'user_quota.default_collection_quota': 500 * MB,
      });
      // The page again, from the server's settings.
      await page.reload();
      await page.locator('#g-user-quota-form').waitFor();
      await ui.session.idle();
      expect(await page.locator('#g-user-quota-user-size-value').inputValue()).toBe('2');
      expect(await page.locator('#g-user-quota-user-size-units').inputValue()).toBe('3');
      expect(await page.locator('#g-user-quota-collection-size-value').inputValue()).toBe('500');
      expect(await page.locator('#g-user-quota-collection-size-units').inputValue()).toBe('2');
    });
    await ui.session.step('a value that is no size is refused with the server message', async () => {
      await page.locator('#g-user-quota-user-size-value').fill('lots');
      await page.locator('#g-user-quota-form input[type="submit"]').click();
      await page.locator('#g-user-quota-error-message', { hasText: 'Invalid quota.' }).waitFor();
      await ui.session.idle();
      expect(await page.locator('#g-user-quota-error-message').textContent()).toBe(
        'Invalid quota.  Must be blank or a non-negative integer representing the limit in bytes.',
      );
      takeRefusal('PUT', /system\/setting/);
      const kept = await api(ui.service.baseUrl, 'GET', 'system/setting?key=user_quota.default_user_quota', adminToken);
      expect(kept).toBe(2 * 1024 * MB);
    });
  });

  it("sets a collection's quota in its dialog; a refused value keeps the dialog open", async () => {
    const { page } = ui.session;
    // A name that is markup: the dialog shows it as text.
    const name = 'Archive <b class="x">&amp;</b>';
    const archive = await api(ui.service.baseUrl, 'POST', 'collection', adminToken, { name });
    await ui.session.step('the dialog shows the default collection quota', async () => {
      await ui.session.goto(`collection/${archive._id}`);
      await page.locator('.g-collection-name', { hasText: name }).waitFor();
      await openQuotaDialog('collection');
      expect(await dialog().locator('.modal-title').textContent()).toBe(`Quota and Assetstore Policies for ${name}`);
      expect(await dialog().locator('.modal-title b').count()).toBe(0);
      expect(await dialog().locator('.g-quota-capacity').textContent()).toBe(' 500.0 MB free of 500.0 MB');
      expect((await dialog().locator('.radio').first().textContent())?.trim()).toBe('Use the default quota: 500.0 MB');
    });
    await ui.session.step('a value that is no size is refused in the dialog', async () => {
      await dialog().locator('#g-user-quota-size-value').fill('-3');
      await dialog().locator('.g-save-policies').click();
      await dialog().locator('.g-validation-failed-message', { hasText: 'Invalid quota.' }).waitFor();
      await ui.session.idle();
      expect(await dialog().locator('.g-validation-failed-message').textContent()).toBe(
        'Invalid quota.  Must be blank or a non-negative integer representing the limit in bytes.',
      );
      expect(await dialog().locator('.g-save-policies').isEnabled()).toBe(true);
      takeRefusal('PUT', /collection\/[0-9a-f]{24}\/quota/);
    });
    await ui.session.step('a save answered by no error document says so, and Save can be pressed again', async () => {
      // A proxy's error page in place of the service's answer (no JSON): Girder's plugin fails in its error handler.
      const quotaRoute = /\/api\/v1\/collection\/[0-9a-f]{24}\/quota$/;
      await page.route(quotaRoute, (route) =>
        route.request().method() === 'PUT'
          ? route.fulfill({ status: 502, contentType: 'text/html', body: '<html><h1>Bad Gateway</h1></html>' })
          : route.continue(),
      );
      await dialog().locator('#g-user-quota-size-value').fill('3');
      await dialog().locator('.g-save-policies').click();
      await dialog().locator('.g-validation-failed-message', { hasText: '502' }).waitFor();
      await ui.session.idle();
      await page.unroute(quotaRoute);
      expect(await dialog().locator('.g-validation-failed-message').textContent()).toBe(
        'The server could not be reached or did not answer as expected (502 Bad Gateway).',
      );
      expect(await dialog().locator('.g-save-policies').isEnabled()).toBe(true);
      expect(ui.session.problems.splice(0)).toEqual([
        expect.stringMatching(/^HTTP 502 PUT http:\/\/[^ ]+\/api\/v1\/collection\/[0-9a-f]{24}\/quota/),
        'console error: Failed to load resource: the server responded with a status of 502 (Bad Gateway)',
      ]);
    });
    await ui.session.step('sets 3 MB', async () => {
      await dialog().locator('#g-user-quota-size-value').fill('3');
      await dialog().locator('#g-user-quota-size-units').selectOption({ label: 'MB' });
      await closeDialog('.g-save-policies');
      const { quota } = await api(ui.service.baseUrl, 'GET', `collection/${archive._id}/quota`, adminToken);
      expect(quota).toMatchObject({ fileSizeQuota: 3 * MB, useQuotaDefault: false, _currentFileSizeQuota: 3 * MB });
      // The page's address with `?dialog=quota` opens the dialog.
      await ui.session.goto(`collection/${archive._id}?dialog=quota`);
      await page.locator('#g-dialog-container.in .g-quota-capacity').waitFor();
      await ui.session.idle();
      expect(await dialog().locator('.g-quota-capacity').textContent()).toBe(' 3.000 MB free of 3.000 MB');
      expect(await dialog().locator('#g-customQuota').isChecked()).toBe(true);
      expect(await dialog().locator('#g-user-quota-size-value').inputValue()).toBe('3');
      expect(await dialog().locator('#g-user-quota-size-units').inputValue()).toBe('2');
      await shot('collection-dialog');
      await closeDialog('[data-dismiss="modal"].btn');
    });
  });
});
