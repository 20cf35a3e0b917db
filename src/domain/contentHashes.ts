import crypto from 'node:crypto';

/**
 * The hashes of a file's bytes, all taken in the one pass that stores them (no second read; the blob stores take them
 * with src/infra/blobs/hashingTap.ts):
 *  - `sha256`: the BlobStore id (content addressing, src/ports/blobStore.ts);
 *  - `sha512`: what Girder's filesystem and GridFS assetstores record on file documents, and what its
 *    `hashsum_download` plugin looks files up by (`GET /file/hashsum/sha512/:hash`).
 */
export interface ContentHashes {
  sha256: string;
  sha512: string;
  size: number;
}

/** The algorithms of Girder's `hashsum_download` plugin (its SUPPORTED_ALGORITHMS). */
export const HASHSUM_ALGORITHMS = ['sha512'] as const;
export type HashsumAlgorithm = (typeof HASHSUM_ALGORITHMS)[number];

/** A lower-case hex SHA-512 (128 digits): what a file's `sha512` holds. */
export const SHA512_HEX = /^[0-9a-f]{128}$/;

/**
 * The hashes of bytes fed to it in order, as they stream somewhere (one pass): `update` with each chunk, waiting when
 * it returns a promise (the hasher is behind), then `digests()` once; `abort()` when the bytes will not all come.
 */
export interface RunningHash {
  update(chunk: Buffer): Promise<void> | undefined;
  digests(): Promise<ContentHashes>;
  abort(): void;
}

/** A RunningHash on the calling thread alone (the blob stores use a faster one, src/infra/blobs/hashingTap.ts). */
export class ContentHasher implements RunningHash {
  private readonly sha256 = crypto.createHash('sha256');
  private readonly sha512 = crypto.createHash('sha512');
  private size = 0;

  update(chunk: Buffer): undefined {
    this.sha256.update(chunk);
    this.sha512.update(chunk);
    this.size += chunk.length;
    return undefined;
  }

  digests(): Promise<ContentHashes> {
    return Promise.resolve({ sha256: this.sha256.digest('hex'), sha512: this.sha512.digest('hex'), size: this.size });
  }

  abort(): void {
    // Nothing to let go of: the hashes are local to this object.
  }
}
