import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import type { ApiClient, TestUser } from './apiClient';

/** One e-mail as it arrived: the envelope, the headers that matter, and the HTML body decoded. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  fromHeader: string;
  toHeader: string;
  contentType: string;
  html: string;
}

/** Quoted-printable (RFC 2045) to text: soft line breaks joined, `=XX` bytes decoded as UTF-8. */
function decodeQuotedPrintable(text: string): string {
  const joined = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    if (joined[i] === '=' && /^[0-9A-F]{2}$/i.test(joined.slice(i + 1, i + 3))) {
      bytes.push(parseInt(joined.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i], 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) =>
    head
      .split('\r\n')
      .find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))
      ?.slice(name.length + 1)
      .trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const html =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return {
    from,
    to,
    subject: header('Subject'),
    fromHeader: header('From'),
    toHeader: header('To'),
    contentType: header('Content-Type'),
    html: html.replace(/\r\n$/, '').replace(/\r\n/g, '\n'),
  };
}

/**
 * A real SMTP server in the test process (smtp-server), on an ephemeral port: the service sends to it as to any
 * mail relay, and the test reads what arrived.
 */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  private waiting: (() => void)[] = [];
  private server!: SMTPServer;
  port = 0;

  static async start(): Promise<SmtpSink> {
    const sink = new SmtpSink();
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          const to = session.envelope.rcptTo.map((r) => r.address);
          sink.arrived(parse(Buffer.concat(chunks).toString('utf8'), from, to));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    sink.server = server;
    sink.port = (server.server.address() as AddressInfo).port;
    return sink;
  }

  private arrived(mail: ReceivedMail): void {
    this.received.push(mail);
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** Points the service's `core.smtp_host` and `core.smtp.port` at this server. */
  async configure(api: ApiClient, admin: TestUser): Promise<void> {
    const res = await api
      .as(admin)
      .put('/system/setting')
      .type('form')
      .send({
        list: JSON.stringify([
          { key: 'core.smtp_host', value: '127.0.0.1' },
          { key: 'core.smtp.port', value: this.port },
        ]),
      });
    if (res.status !== 200) throw new Error(`configuring SMTP: ${res.status} ${res.text}`);
  }

  /** The first mail (after those already taken) to `address`, waiting up to `timeoutMs` for it to arrive. */
  async next(address: string, timeoutMs = 5000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex((m) => m.to.includes(address));
      if (index >= 0) return this.received.splice(index, 1)[0];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no e-mail to ${address} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
