import nodemailer from 'nodemailer';
import { SettingKey, settingValue, type SettingsState } from '../../domain/settings';

/** One e-mail: an HTML body (Girder's mails are `text/html`, UTF-8) to one or more recipients. */
export interface MailMessage {
  subject: string;
  html: string;
  to: string[];
}

/**
 * Sends an e-mail over SMTP as the `core.smtp.*` settings say (Girder's `_SMTPConnection`): host and port,
 * encryption `none` (plain; no upgrade even if the server offers STARTTLS), `starttls` (upgrade required) or `ssl`
 * (TLS from the first byte), and a login when both a username and a password are set. One connection per message,
 * as Girder opens one per message; the sender is `core.email_from_address`.
 */
export async function sendSmtpMail(settings: SettingsState, message: MailMessage): Promise<void> {
  const setting = (key: string) => settingValue(settings, key);
  const encryption = setting(SettingKey.SMTP_ENCRYPTION);
  const user = setting(SettingKey.SMTP_USERNAME) as string;
  const pass = setting(SettingKey.SMTP_PASSWORD) as string;
  const transport = nodemailer.createTransport({
    host: setting(SettingKey.SMTP_HOST) as string,
    port: setting(SettingKey.SMTP_PORT) as number,
    secure: encryption === 'ssl',
    requireTLS: encryption === 'starttls',
    ignoreTLS: encryption === 'none',
    ...(user && pass ? { auth: { user, pass } } : {}),
  });
  try {
    await transport.sendMail({
      from: setting(SettingKey.EMAIL_FROM_ADDRESS) as string,
      to: message.to,
      subject: message.subject || '[no subject]',
      html: message.html,
    });
  } finally {
    transport.close();
  }
}
