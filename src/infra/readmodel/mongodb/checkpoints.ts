import type { ClientSession } from 'mongodb';
import type { GenerationCollections } from './mongoCollections';
import { positionStamp } from './writes';

/** Where a projection's checkpoint is in a generation (0 before its first event). */
export async function readCheckpoint(
  collections: GenerationCollections,
  projection: string,
  session?: ClientSession,
): Promise<bigint> {
  const doc = await collections.get('checkpoints').findOne({ _id: projection }, session ? { session } : {});
  return doc ? BigInt(doc.position as string) : 0n;
}

/**
 * Moves a projection's checkpoint to `position` (never back: the write is guarded by the position's stamp). Without
 * a transaction, a checkpoint already at or past it collides on `_id`: nothing to do.
 */
export async function moveCheckpoint(
  collections: GenerationCollections,
  projection: string,
  position: bigint,
  session?: ClientSession,
): Promise<void> {
  const stamp = positionStamp(position);
  try {
    await collections
      .get('checkpoints')
      .updateOne(
        { _id: projection, stamp: { $lt: stamp } },
        { $set: { position: position.toString(), stamp } },
        { upsert: true, ...(session ? { session } : {}) },
      );
  } catch (error) {
    if (session || (error as { code?: number }).code !== 11000) throw error;
  }
}
