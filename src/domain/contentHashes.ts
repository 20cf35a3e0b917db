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

/** The hashes of bytes fed to it in order: `update` with each chunk, then `digests()` once. */
export class ContentHasher {
  private readonly sha256 = crypto.createHash('sha256');
  private readonly sha512 = crypto.createHash('sha512');
  private size = 0;

  update(chunk: Buffer): void {
    this.sha256.update(chunk);
    this.sha512.update(chunk);
    this.size += chunk.length;
  }

  digests(): ContentHashes {
    return { sha256: this.sha256.digest('hex'), sha512: this.sha512.digest('hex'), size: this.size };
  }
}
