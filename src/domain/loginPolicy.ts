import { AccessDeniedError } from './errors';
import { SettingKey, settingValue, type SettingsState } from './settings';

/**
 * Girder's `User.verifyLogin`, in its order: a disabled account, an address that must be verified first
 * (`core.email_verification` = `required`), an account waiting for approval (`core.registration_policy` =
 * `approve`). Null when the user may log in.
 */
export function loginRefusal(
  user: { status: string; emailVerified: boolean },
  settings: SettingsState,
): AccessDeniedError | null {
  if (user.status === 'disabled') return new AccessDeniedError('Account is disabled.', 'disabled');
  if (!user.emailVerified && settingValue(settings, SettingKey.EMAIL_VERIFICATION) === 'required')
    return new AccessDeniedError('Email verification required.', 'emailVerification');
  if (user.status === 'pending' && settingValue(settings, SettingKey.REGISTRATION_POLICY) === 'approve')
    return new AccessDeniedError('Account approval required.', 'accountApproval');
  return null;
}
