import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestS3, type TestS3 } from '../support/s3Server';
import { api, registerByApi } from './support/api';
import { describeInChromium } from './support/chromium';
import { itemRow, openFolder, openMyFolders, register, uploadHere } from './support/journeys';
import { useBrowserSuite } from './support/suite';

/**
 * The admin console's screens as a site administrator uses them: server configuration, plugins, the users and
 * groups lists, and assetstores (a filesystem store, and an S3 store on an s3rver started here that becomes
 * current, receives an upload the browser sends straight to the bucket and serves it back).
 */
describeInChromium('web client: the admin console', () => {
  const ui = useBrowserSuite();
  let s3: TestS3;
  let fsRoot = '';
  beforeAll(async () => {
    // The store made in the console has `redirect` on (Girder's default): the browser sends the upload straight to
    // the bucket, which allows the service's origin (started by the suite's beforeAll, which runs first).
    s3 = await startTestS3({ corsOrigin: ui.service.baseUrl });
    fsRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-assetstore-'));
  });
  afterAll(async () => {
    await s3?.close();
    fs.rmSync(fsRoot, { recursive: true, force: true });
  });

  const openAdminPage = async (link: string, ready: string): Promise<void> => {
    const { page } = ui.session;
    await page.locator('.g-nav-link[g-target="admin"]').click();
    await page.locator(link).click();
    await page.locator(ready).first().waitFor();
    await ui.session.idle();
  };

  it('reads and saves the server configuration, lists plugins, users and groups', async () => {
    const { page } = ui.session;
    await ui.session.step('register the administrator', async () => {
      await ui.session.goto();
      await register(ui.session, 'admin');
      await registerByApi(ui.service.baseUrl, 'zoey');
    });
    await ui.session.step('server configuration', async () => {
      await openAdminPage('.g-server-config', '.g-settings-form');
      expect(await page.locator('#g-core-brand-name').inputValue()).toBe('Folder Service');
      expect(await page.locator('#g-core-upload-minimum-chunk-size').inputValue()).toBe('5242880');
      await page.locator('.g-submit-settings').click();
      await page.locator('.alert-success', { hasText: 'Settings saved.' }).waitFor();
      await ui.session.idle();
      expect(await page.locator('#g-settings-error-message').textContent()).toBe('');
    });
    await ui.session.step('plugins', async () => {
      await openAdminPage('.g-plugins-config', '.g-plugin-list-container');
    });
    await ui.session.step('users', async () => {
      await page.locator('.g-nav-link[g-target="users"]').click();
      await page.locator('.g-user-list-entry .g-user-login', { hasText: 'zoey' }).waitFor();
      await ui.session.idle();
      expect(await page.locator('.g-user-count').textContent()).toBe('2');
      await page.locator('.g-user-link', { hasText: 'zoey' }).click();
      await page.locator('.g-user-name', { hasText: 'zoey' }).waitFor();
      await ui.session.idle();
    });
    await ui.session.step('groups', async () => {
      const token = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      await api(ui.service.baseUrl, 'POST', 'group', token, { name: 'Curators', public: 'true' });
      await page.locator('.g-nav-link[g-target="groups"]').click();
      await page.locator('.g-group-list-entry .g-group-link', { hasText: 'Curators' }).waitFor();
      await ui.session.idle();
    });
  });

  it('creates filesystem and S3 assetstores; an upload into the current S3 store downloads byte for byte', async () => {
    const { page } = ui.session;
    const container = (name: string) =>
      page.locator('.g-assetstore-container').filter({ has: page.locator('.g-assetstore-name', { hasText: name }) });
    const create = async (tab: string, fields: Record<string, string>, name: string): Promise<void> => {
      await page.locator(`[data-target="#${tab}"]`).click();
      await page.locator(`#${tab}.in`).waitFor();
      for (const [id, value] of Object.entries(fields)) await page.locator(`#${id}`).fill(value);
      await page.locator(`#${tab} .g-new-assetstore-submit`).click();
      await container(name).waitFor();
      await ui.session.idle();
    };
    await ui.session.step('filesystem assetstore', async () => {
      await openAdminPage('.g-assetstore-config', '.g-assetstore-container');
      await create('g-create-fs-tab', { 'g-new-fs-name': 'Archive', 'g-new-fs-root': fsRoot }, 'Archive');
      expect((await container('Archive').locator('.g-assetstore-root').textContent())?.trim()).toBe(fsRoot);
    });
    const prefix = `e2e-${crypto.randomUUID()}`;
    await ui.session.step('S3 assetstore, made current', async () => {
      const settings = s3.settings(prefix);
      await create(
        'g-create-s3-tab',
        {
          'g-new-s3-name': 'Objects',
          'g-new-s3-bucket': settings.bucket,
          'g-new-s3-prefix': prefix,
          'g-new-s3-access-key-id': settings.accessKeyId ?? '',
          'g-new-s3-secret': settings.secret ?? '',
          'g-new-s3-service': settings.service,
        },
        'Objects',
      );
      await container('Objects').locator('.g-set-current').click();
      await container('Objects').locator('.g-assetstore-current-text').waitFor();
      await ui.session.idle();
    });
    const bytes = crypto.randomBytes(40 * 1024);
    await ui.session.step('upload into the S3 store and download', async () => {
      await openMyFolders(ui.session);
      await openFolder(ui.session, 'Public');
      await uploadHere(ui.session, [{ name: 'cloud.bin', mimeType: 'application/octet-stream', buffer: bytes }]);
      await itemRow(ui.session, 'cloud.bin').locator('.g-item-list-link').click();
      await page.locator('.g-file-list-link', { hasText: 'cloud.bin' }).waitFor();
      await ui.session.idle();
      const itemId = /item\/([0-9a-f]{24})/.exec(page.url())?.[1] ?? '';
      const token = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      const [file] = await api(ui.service.baseUrl, 'GET', `item/${itemId}/files`, token);
      const stores: { _id: string; name: string }[] = await api(ui.service.baseUrl, 'GET', 'assetstore', token);
      const objects = stores.find((store) => store.name === 'Objects')?._id ?? '';
      const held: { _id: string }[] = await api(ui.service.baseUrl, 'GET', `assetstore/${objects}/files`, token);
      expect(held.map((f) => f._id)).toEqual([file._id]);
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('.g-file-list-link', { hasText: 'cloud.bin' }).click(),
      ]);
      expect(Buffer.compare(fs.readFileSync(await download.path()), bytes)).toBe(0);
    });
  });
});
