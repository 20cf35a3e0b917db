import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { RestError } from '../../domain/errors';
import { AccessLevel } from '../../domain/access';
import { SettingKey } from '../../domain/settings';
import { SETTING_RULES } from '../../domain/settingRules';
import { newTotpKey, totpUri } from '../../domain/totp';
import { model } from '../modelParams';
import { verifyOtp } from '../otpCheck';
import { settingNow } from '../../queries/settingQueries';
import { enableOtp, removeOtp, startOtp } from '../../commands/userAccountCommands';

const ALREADY_ENABLED = 'The user has already enabled one-time passwords.';

/**
 * Two-factor login (Girder's OTP routes): start (a new TOTP key, as an `otpauth://` URI for an authenticator app),
 * finish (a code from that key in the `Girder-OTP` header; from then on every password login needs one), remove.
 * Each needs ADMIN on the user: the user themselves or a site administrator.
 */
export const userOtpRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: ':id/otp',
    summary: 'Initiate the enablement of one-time passwords for this user.',
    access: 'user',
    params: [],
    models: { user: model.path('user', AccessLevel.ADMIN) },
    async handler({ models: { user }, services, meta, req }) {
      if (user.otp?.enabled) throw new RestError(ALREADY_ENABLED);
      const key = newTotpKey();
      await startOtp(services.commands, user._id, key, meta);
      // The issuer an authenticator app shows: the brand once it is set, else the site's host name (Girder's rule,
      // so that two sites of the same default brand stay apart).
      const brand = (await settingNow(services, SettingKey.BRAND_NAME)) as string;
      const issuer = brand !== SETTING_RULES.get(SettingKey.BRAND_NAME)?.default ? brand : req.hostname;
      return { totpUri: totpUri(key, user.login, issuer) };
    },
  }),
  route({
    method: 'PUT',
    path: ':id/otp',
    summary: 'Finalize the enablement of one-time passwords for this user (a code in the Girder-OTP header).',
    access: 'user',
    params: [],
    models: { user: model.path('user', AccessLevel.ADMIN) },
    async handler({ models: { user }, services, meta, req }) {
      const code = req.get('Girder-OTP');
      if (!code) throw new RestError('The "Girder-OTP" header must be provided.');
      if (!user.otp) throw new RestError('The user has not initialized one-time passwords.');
      if (user.otp.enabled) throw new RestError(ALREADY_ENABLED);
      verifyOtp(user, code);
      await enableOtp(services.commands, user._id, meta);
      return null;
    },
  }),
  route({
    method: 'DELETE',
    path: ':id/otp',
    summary: 'Disable one-time passwords for this user.',
    access: 'user',
    params: [],
    models: { user: model.path('user', AccessLevel.ADMIN) },
    async handler({ models: { user }, services, meta }) {
      if (!user.otp?.enabled) throw new RestError('The user has not enabled one-time passwords.');
      await removeOtp(services.commands, user._id, meta);
      return null;
    },
  }),
];
