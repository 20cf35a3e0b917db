import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestS3, type TestS3 } from '../support/s3Server';
import { api } from './support/api';
import { describeInChromium } from './support/chromium';
import { itemRow, openFolder, openMyFolders, register, uploadHere } from './support/journeys';
import { useBrowserSuite } from './support/suite';

/**
 * The web client's direct-to-S3 path in Chromium: the current store is S3 with `redirect` on (s3rver started here,
 * its bucket allowing the service's origin by CORS), so the browser sends the bytes straight to the bucket (one
 * presigned PUT for a small file; for a file larger than one 32 MiB direct chunk, a multipart upload with each part's
 * request signed by the service), the service records the file on POST /file/completion, and the download redirects
 * the browser to a presigned URL of the object.
 */
describeInChromium('web client: uploads straight to an S3 bucket', () => {
  const ui = useBrowserSuite();
  let s3: TestS3;
  let tmp = '';
  let token = '';
  /** The browser's requests to s3rver (method and path), CORS preflights aside. */
  const toBucket: string[] = [];
  /** The sizes of the bodies the browser sent to the service's /file/chunk. */
  const chunkBodies: number[] = [];
  /** The methods of the browser's requests to /file/completion. */
  const completions: string[] = [];
  const prefix = `e2e-direct-${crypto.randomUUID()}`;

  beforeAll(async () => {
    // After the suite's service: the bucket allows exactly its origin.
    s3 = await startTestS3({ corsOrigin: ui.service.baseUrl });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-s3-direct-'));
  });
  afterAll(async () => {
    await s3?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * Uploads through the dialog, then downloads from the item page, comparing the bytes; returns the browser's
   * requests to the bucket while uploading, and the file.
   */
  const uploadAndDownload = async (
    name: string,
    bytes: Buffer,
  ): Promise<{ uploading: string[]; file: { _id: string; sha512?: string } }> => {
    const { page } = ui.session;
    const file = path.join(tmp, name);
    fs.writeFileSync(file, bytes);
    toBucket.length = 0;
    chunkBodies.length = 0;
    completions.length = 0;
    await openMyFolders(ui.session);
    await openFolder(ui.session, 'Public');
    await uploadHere(ui.session, [file]);
    await itemRow(ui.session, name).locator('.g-item-list-link').click();
    await page.locator('.g-file-list-link', { hasText: name }).waitFor();
    await ui.session.idle();
    const itemId = /item\/([0-9a-f]{24})/.exec(page.url())?.[1] ?? '';
    const [record] = await api(ui.service.baseUrl, 'GET', `item/${itemId}/files`, token);
    expect([record.name, record.size]).toEqual([name, bytes.length]);
    const uploading = toBucket.splice(0);
    const [download] = await Promise.all([
      // Seconds at most from a local bucket; a missing object never starts one.
      page.waitForEvent('download', { timeout: 10_000 }),
      page.locator('.g-file-list-link', { hasText: name }).click(),
    ]);
    expect(Buffer.compare(fs.readFileSync(await download.path()), bytes)).toBe(0);
    // The bytes came from the bucket: the service answered 303 to a presigned URL of the object.
    expect(toBucket).toEqual([expect.stringMatching(new RegExp(`^GET /${s3.settings(prefix).bucket}/${prefix}/`))]);
    return { uploading, file: record };
  };

  /** Records the browser's requests to the bucket and the service's upload routes, from the first test on. */
  const watchRequests = (): void => {
    const { service } = s3.settings(prefix);
    ui.session.page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin === service && request.method() !== 'OPTIONS')
        toBucket.push(`${request.method()} ${url.pathname}`);
      if (url.pathname === '/api/v1/file/chunk') chunkBodies.push(request.postDataBuffer()?.length ?? 0);
      if (url.pathname === '/api/v1/file/completion') completions.push(request.method());
    });
  };

  it('sends a small file in one presigned PUT to the bucket, recorded on POST /file/completion', async () => {
    const { page } = ui.session;
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    watchRequests();
    await ui.session.step('register; an S3 store with redirect on made current', async () => {
      await ui.session.goto();
      await register(ui.session, 'admin');
      token = String(await page.evaluate('window.girder.auth.getCurrentToken()'));
      const store = await api(ui.service.baseUrl, 'POST', 'assetstore', token, {
        name: 'Direct',
        type: '2',
        bucket,
        prefix,
        accessKeyId: accessKeyId ?? '',
        secret: secret ?? '',
        service,
      });
      expect(store.redirect).toBe(true);
      const made = await api(ui.service.baseUrl, 'PUT', `assetstore/${store._id as string}`, token, {
        name: 'Direct',
        bucket,
        prefix,
        accessKeyId: accessKeyId ?? '',
        service,
        current: 'true',
      });
      expect(made.current).toBe(true);
    });
    await ui.session.step('a small file: one PUT to the bucket', async () => {
      const bytes = crypto.randomBytes(100 * 1024);
      const { uploading, file } = await uploadAndDownload('small.bin', bytes);
      expect(uploading).toEqual([expect.stringMatching(new RegExp(`^PUT /${bucket}/${prefix}/direct/[0-9a-f]{24}$`))]);
      expect([chunkBodies, completions]).toEqual([[], ['POST']]);
      // The object was read back once at completion: the file has its SHA-512.
      expect(file.sha512).toBe(crypto.createHash('sha512').update(bytes).digest('hex'));
    });
  });

  /*
   * The web client served here (@girder/core 5) sends no completion of a multipart upload (girder/girder#3618 moved it
   * to the server): POST /file/completion completes it from the bucket's parts (src/commands/directUploadCommands.ts).
   */
  it('sends a file of two direct chunks to the bucket as a multipart upload', async () => {
    const { bucket } = s3.settings(prefix);
    await ui.session.step('a file of two direct chunks: a multipart upload to the bucket', async () => {
      const chunk = 32 * 1024 * 1024;
      const bytes = crypto.randomBytes(chunk + 1024 * 1024 + 7);
      const { uploading } = await uploadAndDownload('large.bin', bytes);
      const key = `/${bucket}/${prefix}/direct/[0-9a-f]{24}$`;
      expect(uploading).toEqual([
        expect.stringMatching(new RegExp(`^POST ${key}`)),
        expect.stringMatching(new RegExp(`^PUT ${key}`)),
        expect.stringMatching(new RegExp(`^PUT ${key}`)),
      ]);
      // The service signed each part's request; none of the bytes went through it.
      expect(chunkBodies).toHaveLength(2);
      expect(Math.max(...chunkBodies)).toBeLessThan(1024);
      expect(completions).toEqual(['POST']);
    });
  });
});
