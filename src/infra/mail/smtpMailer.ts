import nodemailer from 'nodemailer';
import type { Mailer } from '../../ports/mailer';

/**
 * The Mailer over SMTP as Girder's `_SMTPConnection` sends: encryption `none` (plain; no upgrade even if the server
 * offers STARTTLS), `starttls` (upgrade required) or `ssl` (TLS from the first byte), and a login when both a username
 * and a password are set. One connection per message, as Girder opens one per message.
 */
export const smtpMailer: Mailer = {
  async send(smtp, message) {
    const transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.encryption === 'ssl',
      requireTLS: smtp.encryption === 'starttls',
      ignoreTLS: smtp.encryption === 'none',
      ...(smtp.username && smtp.password ? { auth: { user: smtp.username, pass: smtp.password } } : {}),
    });
    try {
      await transport.sendMail({
        from: smtp.from,
        to: message.to,
        subject: message.subject || '[no subject]',
        html: message.html,
      });
    } finally {
      transport.close();
    }
  },
};
