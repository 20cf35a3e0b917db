/** One e-mail: an HTML body (Girder's mails are `text/html`, UTF-8) to one or more recipients. */
export interface MailMessage {
  subject: string;
  html: string;
  to: string[];
}

/** Where and how to send, from the `core.smtp.*` and `core.email_from_address` settings at the time of sending. */
export interface SmtpSettings {
  host: string;
  port: number;
  encryption: 'none' | 'starttls' | 'ssl';
  username: string;
  password: string;
  from: string;
}

/** Sends e-mail (src/infra/mail/smtpMailer.ts over SMTP); rejects when the server refuses or cannot be reached. */
export interface Mailer {
  send(smtp: SmtpSettings, message: MailMessage): Promise<void>;
}
