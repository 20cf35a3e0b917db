import type { ClientSession, Collection, Db } from 'mongodb';
import { FencedOffError, type LeaseFence, type LeaseRecord, type Leases } from '../../../ports/readModel';

/**
 * The collection of lease documents `{_id: name, holder, expiresAt, epoch}`, outside the read-model generations. A
 * released lease keeps its document without a holder, so that its epoch (the fencing token) never goes back.
 */
const LEASES_COLLECTION = 'rm_leases';

interface LeaseDoc {
  _id: string;
  holder?: string;
  expiresAt: Date;
  epoch?: number;
  /** The position of the last projection write made under this lease. */
  fencedPosition?: string;
  /**
   * Fence checks so far: what makes every check a write. Setting `fencedPosition` to the value it has already (the
   * steps of one event, ./stepwiseApply.ts) changes nothing, and the server neither writes nor locks the document
   * for an update that changes nothing, so a takeover would not conflict with it.
   */
  fenceChecks?: number;
}

const DUPLICATE_KEY = 11000;

/**
 * Leases as documents in MongoDB. Each call is one single-document write, atomic on the server. Expiry is computed
 * and compared with the server's clock (`$$NOW` in update pipelines), so the API processes' clocks may disagree
 * without two of them holding a lease at once.
 */
export class MongoLeases implements Leases {
  constructor(private readonly db: Db) {}

  private get collection(): Collection<LeaseDoc> {
    return this.db.collection<LeaseDoc>(LEASES_COLLECTION);
  }

  async acquire(name: string, holder: string, ttlMs: number, replacing?: string): Promise<boolean> {
    // Whether the caller may take the lease, decided inside the update (a server refuses `$expr` in the filter of an
    // upsert): it is missing (the upsert's new document), ours, expired, or held by the holder known to be gone.
    const takeable: unknown[] = [
      { $eq: [{ $type: '$holder' }, 'missing'] },
      { $eq: ['$holder', holder] },
      { $lte: ['$expiresAt', '$$NOW'] },
    ];
    if (replacing !== undefined) takeable.push({ $eq: ['$holder', replacing] });
    // The epoch moves on every take except the holder asking again for its own live lease.
    const keepsEpoch = { $and: [{ $eq: ['$holder', holder] }, { $gt: ['$expiresAt', '$$NOW'] }] };
    const take = [
      { $set: { _take: { $or: takeable }, _epoch: { $ifNull: ['$epoch', 0] } } },
      {
        $set: {
          epoch: { $cond: [{ $and: ['$_take', { $not: [keepsEpoch] }] }, { $add: ['$_epoch', 1] }, '$_epoch'] },
          holder: { $cond: ['$_take', holder, '$holder'] },
          expiresAt: { $cond: ['$_take', { $add: ['$$NOW', ttlMs] }, '$expiresAt'] },
        },
      },
      { $unset: ['_take', '_epoch'] },
    ];
    for (let attempt = 1; ; attempt++) {
      try {
        const doc = await this.collection.findOneAndUpdate({ _id: name }, take, {
          upsert: true,
          returnDocument: 'after',
        });
        return doc?.holder === holder;
      } catch (error) {
        // Two upserts of a missing lease raced and the other inserted it: decide again against its document.
        if ((error as { code?: number }).code !== DUPLICATE_KEY || attempt >= 2) throw error;
      }
    }
  }

  async renew(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: name, holder }, [
      { $set: { expiresAt: { $add: ['$$NOW', ttlMs] } } },
    ]);
    return result.matchedCount === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.collection.updateOne(
      { _id: name, holder },
      { $unset: { holder: '' }, $set: { expiresAt: new Date(0) } },
    );
  }

  async get(name: string): Promise<LeaseRecord | null> {
    const doc = await this.collection.findOne({ _id: name });
    return doc?.holder ? { holder: doc.holder, expiresAt: doc.expiresAt, epoch: doc.epoch ?? 0 } : null;
  }

  /**
   * Throws {@link FencedOffError} unless the lease is still at the fence's epoch. It is a conditional update of the
   * lease document (not a read), run in the projection's transaction: a takeover that commits first makes it match
   * nothing, and one that comes later conflicts with this write and waits for (or retries after) the transaction, so
   * no projection write of an older epoch commits after a takeover. Without transactions it is checked before the
   * event's writes, which the per-document stamps keep idempotent.
   */
  async checkFence(fence: LeaseFence, position: bigint, session?: ClientSession): Promise<void> {
    const result = await this.collection.updateOne(
      { _id: fence.lease, epoch: fence.epoch },
      { $set: { fencedPosition: position.toString() }, $inc: { fenceChecks: 1 } },
      session ? { session } : {},
    );
    if (result.matchedCount === 1) return;
    const current = await this.collection.findOne({ _id: fence.lease }, session ? { session } : {});
    throw new FencedOffError(fence, current ? (current.epoch ?? 0) : null);
  }
}
