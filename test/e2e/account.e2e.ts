import crypto from 'node:crypto';
import { api } from './support/api';
import { describeInChromium } from './support/chromium';
import { confirm, logOut, openDialog, register } from './support/journeys';
import { useBrowserSuite } from './support/suite';

/** RFC 4648 base32 (the key the two-factor screen shows, in 4-character groups) to bytes. */
function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of text.replace(/[-\s=]/g, '').toUpperCase()) {
    const value = alphabet.indexOf(char);
    if (value < 0) throw new Error(`Not base32: ${char}`);
    bits += value.toString(2).padStart(5, '0');
  }
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/** RFC 6238 TOTP (HMAC-SHA1, 30 s steps, 6 digits) of `key` now. */
function totp(key: Buffer): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000)));
  const mac = crypto.createHmac('sha1', key).update(counter).digest();
  const at = mac[mac.length - 1] & 0x0f;
  const code = (mac.readUInt32BE(at) & 0x7fffffff) % 1_000_000;
  return String(code).padStart(6, '0');
}

/** My account's tabs: profile, password, API keys (create, scopes, delete) and two-factor setup, then a login with it. */
describeInChromium('web client: my account', () => {
  const ui = useBrowserSuite();
  // The two-factor login moves the service's clock (Date.now in this process) on; whatever happens, it moves back.
  afterEach(() => jest.restoreAllMocks());
  let userId = '';
  let token = '';

  const openTab = async (name: string, pane: string): Promise<void> => {
    const { page } = ui.session;
    await page.locator(`.g-account-tabs a[name="${name}"]`).click();
    await page.locator(`${pane}.active`).waitFor();
    await ui.session.idle();
  };

  it('saves the profile and changes the password', async () => {
    const { page } = ui.session;
    await ui.session.step('register and open my account', async () => {
      await ui.session.goto();
      await register(ui.session, 'maria');
      token = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      userId = String(await page.evaluate('window.girder.auth.getCurrentUser().id'));
      await page.locator('.g-user-dropdown-link').click();
      await page.locator('a.g-my-settings').click();
      await page.locator('#g-user-info-form').waitFor();
      await ui.session.idle();
    });
    await ui.session.step('profile', async () => {
      await page.locator('#g-user-info-form #g-firstName').fill('Maria');
      await page.locator('#g-user-info-form #g-email').fill('maria@example.org');
      await page.locator('#g-user-info-form button[type="submit"]').click();
      await page.locator('.alert-success', { hasText: 'Info saved.' }).waitFor();
      await ui.session.idle();
      const me = await api(ui.service.baseUrl, 'GET', `user/${userId}`, token);
      expect([me.firstName, me.email]).toEqual(['Maria', 'maria@example.org']);
    });
    await ui.session.step('password', async () => {
      await openTab('password', '#g-account-tab-password');
      await page.locator('#g-password-old').fill('password1');
      await page.locator('#g-password-new').fill('password2');
      await page.locator('#g-password-retype').fill('password2');
      await page.locator('#g-password-change-form button[type="submit"]').click();
      await page.locator('.alert-success', { hasText: 'Password changed.' }).waitFor();
      await ui.session.idle();
    });
  });

  it('creates an API key, limits its scopes and deletes it', async () => {
    const { page } = ui.session;
    const row = page.locator('.g-api-key-container', { hasText: 'scripts' });
    await ui.session.step('create', async () => {
      await openTab('apikeys', '#g-account-tab-api-keys');
      await openDialog(ui.session, () => page.locator('.g-api-key-new').click());
      await page.locator('#g-api-key-name').fill('scripts');
      await page.locator('.g-save-api-key').click();
      await row.locator('td[col="scope"]', { hasText: 'Full access' }).waitFor();
      await ui.session.idle();
    });
    await ui.session.step('edit scopes', async () => {
      await openDialog(ui.session, () => row.locator('.g-api-key-edit').click());
      await page.locator('#g-scope-mode-custom').check();
      await page.locator('.g-custom-scope-checkbox[value="core.data.read"]').check();
      await page.locator('.g-save-api-key').click();
      await row.locator('td[col="scope"]', { hasText: 'Custom scopes' }).waitFor();
      await ui.session.idle();
      const [key] = await api(ui.service.baseUrl, 'GET', `api_key?userId=${userId}`, token);
      expect([key.name, key.scope]).toEqual(['scripts', ['core.data.read']]);
    });
    await ui.session.step('delete', async () => {
      await openDialog(ui.session, () => row.locator('.g-api-key-delete').click());
      await confirm(ui.session);
      await page.locator('.g-api-keys-empty-message').waitFor();
      expect(await api(ui.service.baseUrl, 'GET', `api_key?userId=${userId}`, token)).toEqual([]);
    });
  });

  it('sets up two-factor authentication and logs in with a computed code', async () => {
    const { page } = ui.session;
    let key: Buffer = Buffer.alloc(0);
    await ui.session.step('enable two-factor', async () => {
      await openTab('otp', '#g-account-tab-otp');
      await page.locator('#g-user-otp-initialize-enable').click();
      await page.locator('#g-user-otp-token').waitFor();
      await ui.session.idle();
      const shown = await page
        .locator('.g-account-otp-enter-manual tr', { hasText: 'Key' })
        .locator('code')
        .innerText();
      key = base32Decode(shown);
      await page.locator('#g-user-otp-token').fill(totp(key));
      await page.locator('#g-user-otp-finalize-enable').click();
      await page.locator('#g-user-otp-disable').waitFor();
      await ui.session.idle();
      expect((await api(ui.service.baseUrl, 'GET', `user/${userId}`, token)).otp).toBe(true);
    });
    await ui.session.step('log in with the code', async () => {
      // A code is refused until the clock has moved past the step of the last one accepted (Girder's verifyOtp), so
      // the service (in this process) is moved on by one 30-second step rather than the test waiting for it.
      const realNow = Date.now.bind(Date);
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 30_000);
      await logOut(ui.session);
      await openDialog(ui.session, () => page.locator('.g-login').click());
      await page.locator('#g-login').fill('maria');
      await page.locator('#g-password').fill('password2');
      await page.locator('#g-login-button').click();
      // Girder's client first logs in without a code; the 401 naming Girder-OTP makes it ask for one.
      await page.locator('#g-login-otp-group:not(.hidden)').waitFor();
      await ui.session.idle();
      const asked = ui.session.problems.splice(0);
      expect(asked.filter((problem) => problem.startsWith('HTTP'))).toEqual([
        expect.stringMatching(/^HTTP 401 GET http:[^ ]+\/api\/v1\/user\/authentication(: .*Girder-OTP.*)?$/),
      ]);
      await page.locator('#g-login-otp').fill(totp(key));
      await page.locator('#g-login-button').click();
      await page.locator('.g-user-dropdown-link').filter({ hasText: 'maria' }).waitFor();
      await ui.session.idle();
    });
  });
});
