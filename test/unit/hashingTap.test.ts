import crypto from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HashingTap } from '../../src/infra/blobs/hashingTap';

const hex = (algorithm: string, bytes: Buffer) => crypto.createHash(algorithm).update(bytes).digest('hex');

/** Streams `chunks` through a tap into a sink; resolves with the tap's digests and the bytes that came through. */
async function through(chunks: Buffer[]) {
  const tap = new HashingTap();
  const out: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      out.push(chunk);
      callback();
    },
  });
  await pipeline(Readable.from(chunks), tap, sink);
  return { digests: tap.digests(), bytes: Buffer.concat(out) };
}

describe('HashingTap (SHA-256 here, SHA-512 on the hashing thread)', () => {
  it.each([
    ['no bytes', [] as number[]],
    ['a few bytes', [3]],
    ['exactly one batch', [1024 * 1024]],
    ['chunks across batch boundaries', [700_000, 700_000, 1, 65_536, 900_000]],
    ['more than the batches in flight, in one chunk', [12 * 1024 * 1024 + 5]],
  ])('passes the bytes on unchanged and hashes them: %s', async (_name, sizes) => {
    const chunks = sizes.map((n) => crypto.randomBytes(n));
    const all = Buffer.concat(chunks);
    const { digests, bytes } = await through(chunks);
    expect(bytes.equals(all)).toBe(true);
    expect(digests).toEqual({ sha256: hex('sha256', all), sha512: hex('sha512', all), size: all.length });
  });

  it('hashes streams that run at the same time each on its own', async () => {
    const sources = [crypto.randomBytes(3_000_000), crypto.randomBytes(10), crypto.randomBytes(2_500_000)];
    const results = await Promise.all(sources.map((bytes) => through([bytes.subarray(0, 1000), bytes.subarray(1000)])));
    expect(results.map((r) => r.digests.sha512)).toEqual(sources.map((bytes) => hex('sha512', bytes)));
  });

  it('fails with its source, and the next stream still hashes right', async () => {
    const failing = new Readable({
      read() {
        this.push(crypto.randomBytes(2 * 1024 * 1024));
        this.destroy(new Error('client went away'));
      },
    });
    const tap = new HashingTap();
    await expect(pipeline(failing, tap, new Writable({ write: (_c, _e, cb) => cb() }))).rejects.toThrow(
      'client went away',
    );
    expect(() => tap.digests()).toThrow('HashingTap.digests() before the stream ended.');
    const after = crypto.randomBytes(5000);
    expect((await through([after])).digests.sha512).toBe(hex('sha512', after));
  });
});
