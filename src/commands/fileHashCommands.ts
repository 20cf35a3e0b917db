import type { FileDoc } from '../ports/readModel';
import type { ProgressContext } from '../bus/progress';
import type { RequestMeta } from './requestMeta';
import { ContentHasher, type HashsumAlgorithm } from '../domain/contentHashes';
import { itemDecider, itemStream } from '../domain/item';
import type { BlobDeps } from './writeDeps';
import { contentAddressOf } from '../domain/assetstoreBlobRef';

/** What `POST /file/:id/hashsum` answers: the hashes it computed, or null when the file had them all (Girder's). */
export type ComputedHashes = Partial<Record<HashsumAlgorithm, string>> | null;

/**
 * Girder's `_computeHash`: the hashes a file lacks, read from its stored bytes and recorded as an event. Only files
 * recorded before hashes were kept lack one (every upload hashes its bytes as they stream in). The bytes are checked
 * against their content id on the way: a hash of bytes that are not the file's is never recorded.
 */
export async function computeFileHashes(
  deps: Pick<BlobDeps, 'blobs' | 'commands'>,
  file: FileDoc,
  progress: ProgressContext,
  meta: RequestMeta,
): Promise<ComputedHashes> {
  if (file.sha512 !== undefined) return null;
  const hasher = new ContentHasher();
  for await (const chunk of await deps.blobs.get(file.blobId)) {
    hasher.update(chunk as Buffer);
    await progress.update({ increment: (chunk as Buffer).length });
  }
  const { sha256, sha512 } = await hasher.digests();
  const address = contentAddressOf(file.blobId);
  if (address !== null && sha256 !== address)
    throw new Error(`The stored bytes of file ${file._id} do not match their content id ${file.blobId}.`);
  const recorded = await deps.commands.handle(itemStream(file.itemId), itemDecider, meta, (item) =>
    item.decide({ type: 'RecordFileHash', data: { fileId: file._id, blobId: file.blobId, sha512 } }),
  );
  // Nothing recorded: another request recorded it first, or the bytes were replaced meanwhile (with their own hash).
  return recorded.length > 0 ? { sha512 } : null;
}
