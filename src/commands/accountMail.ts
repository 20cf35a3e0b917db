import type { RequestMeta } from './requestMeta';
import type { UserDoc } from '../ports/readModel';
import { Scope } from '../domain/scopes';
import { SettingKey, settingValue, type SettingsState } from '../domain/settings';
import {
  accountApprovalMail,
  accountApprovedMail,
  emailVerificationMail,
  groupInviteMail,
  temporaryAccessMail,
  type MailFrame,
} from '../domain/mailTemplates';
import type { MailMessage, SmtpSettings } from '../ports/mailer';
import { settingsNow } from '../queries/settingQueries';
import { issueToken } from './userCommands';
import type { MailDeps } from './writeDeps';

/**
 * The e-mails of accounts (Girder's user model and routes): verification, temporary access (password reset), approval
 * notices. Each is sent in the background, as Girder's `sendMail` hands it to a daemon thread: the request does not
 * wait for the SMTP server, and a failure is logged (recipients and host, never the body, which holds tokens).
 */

/** Days the links of these mails work (Girder: one day). */
const LINK_DAYS = 1;

interface MailContext {
  settings: SettingsState;
  frame: MailFrame;
}

/** The settings and the brand/host frame of a mail; `origin` is the request's, the default `core.email_host`. */
async function mailContext(deps: MailDeps, origin: string): Promise<MailContext> {
  const settings = await settingsNow(deps);
  return {
    settings,
    frame: {
      brandName: settingValue(settings, SettingKey.BRAND_NAME) as string,
      host: settingValue(settings, SettingKey.EMAIL_HOST, { origin }) as string,
    },
  };
}

/** The SMTP settings now (their validators guarantee the types). */
function smtpSettings(settings: SettingsState): SmtpSettings {
  const setting = (key: string) => settingValue(settings, key);
  return {
    host: setting(SettingKey.SMTP_HOST) as string,
    port: setting(SettingKey.SMTP_PORT) as number,
    encryption: setting(SettingKey.SMTP_ENCRYPTION) as SmtpSettings['encryption'],
    username: setting(SettingKey.SMTP_USERNAME) as string,
    password: setting(SettingKey.SMTP_PASSWORD) as string,
    from: setting(SettingKey.EMAIL_FROM_ADDRESS) as string,
  };
}

function send(deps: MailDeps, context: MailContext, message: MailMessage): void {
  const smtp = smtpSettings(context.settings);
  deps.logger.info({ to: message.to, host: smtp.host }, 'Sending email');
  deps.mailer.send(smtp, message).catch((error: unknown) => {
    deps.logger.error({ to: message.to, host: smtp.host, error: String(error) }, 'Email not sent');
  });
}

/** A mail carrying a one-day token of `scope` in a link to the web client's `#useraccount/<id>/<route>/<token>`. */
async function sendLinkMail(
  deps: MailDeps,
  user: UserDoc,
  to: string,
  link: { scope: string; route: string; subject: string; html: (frame: MailContext['frame'], url: string) => string },
  origin: string,
  meta: RequestMeta,
): Promise<void> {
  const context = await mailContext(deps, origin);
  const token = await issueToken(deps.commands, { userId: user._id, scope: [link.scope], days: LINK_DAYS }, meta);
  const url = `${context.frame.host}#useraccount/${user._id}/${link.route}/${token.token}`;
  send(deps, context, {
    subject: `${context.frame.brandName}: ${link.subject}`,
    html: link.html(context.frame, url),
    to: [to],
  });
}

/** Girder's `_sendVerificationEmail`: a one-day token of scope `core.email_verification` and the link that uses it. */
export function sendVerificationEmail(deps: MailDeps, user: UserDoc, origin: string, meta: RequestMeta) {
  return sendLinkMail(
    deps,
    user,
    user.email,
    {
      scope: Scope.EMAIL_VERIFICATION,
      route: 'verification',
      subject: 'Email verification',
      html: emailVerificationMail,
    },
    origin,
    meta,
  );
}

/** `PUT /user/password/temporary`: a one-day token of scope `core.user_auth.temporary`, mailed to `email`. */
export function sendTemporaryAccess(deps: MailDeps, user: UserDoc, email: string, origin: string, meta: RequestMeta) {
  return sendLinkMail(
    deps,
    user,
    email,
    { scope: Scope.TEMP_USER, route: 'token', subject: 'Temporary access', html: temporaryAccessMail },
    origin,
    meta,
  );
}

/** Registration policy `approve`: every site administrator is told of the account waiting for them. */
export async function sendApprovalNotice(deps: MailDeps, user: UserDoc, origin: string): Promise<void> {
  const context = await mailContext(deps, origin);
  const to = (await deps.readModel.users.admins()).map((admin) => admin.email);
  if (to.length === 0) return;
  send(deps, context, {
    subject: `${context.frame.brandName}: Account pending approval`,
    html: accountApprovalMail(context.frame, user, `${context.frame.host}#user/${user._id}`),
    to,
  });
}

/** An administrator enabled a pending account: its user is told they may log in. */
export async function sendApprovedNotice(deps: MailDeps, user: UserDoc, origin: string): Promise<void> {
  const context = await mailContext(deps, origin);
  send(deps, context, {
    subject: `${context.frame.brandName}: Account approved`,
    html: accountApprovedMail(context.frame, context.frame.host),
    to: [user.email],
  });
}

/** `POST /group/:id/invitation` without `quiet` or `force`: the invited user is told, with a link to the group. */
export async function sendGroupInvitation(
  deps: MailDeps,
  invited: UserDoc,
  inviter: UserDoc,
  group: { _id: string; name: string },
  origin: string,
): Promise<void> {
  const context = await mailContext(deps, origin);
  send(deps, context, {
    subject: `${context.frame.brandName}: You've been invited to a group`,
    html: groupInviteMail(context.frame, invited, inviter, group),
    to: [invited.email],
  });
}
