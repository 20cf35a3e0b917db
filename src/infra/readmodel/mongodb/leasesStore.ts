import type { Collection, Db } from 'mongodb';
import type { LeaseRecord, Leases } from '../../../ports/readModel';

/** The collection of lease documents `{_id: name, holder, expiresAt}`, outside the read-model generations. */
export const LEASES_COLLECTION = 'rm_leases';

interface LeaseDoc {
  _id: string;
  holder: string;
  expiresAt: Date;
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
    const takeable: unknown[] = [{ $eq: [{ $type: '$holder' }, 'missing'] }, { $eq: ['$holder', holder] }, { $lte: ['$expiresAt', '$$NOW'] }];
    if (replacing !== undefined) takeable.push({ $eq: ['$holder', replacing] });
    const take = [
      { $set: { _take: { $or: takeable } } },
      {
        $set: {
          holder: { $cond: ['$_take', holder, '$holder'] },
          expiresAt: { $cond: ['$_take', { $add: ['$$NOW', ttlMs] }, '$expiresAt'] },
        },
      },
      { $unset: '_take' },
    ];
    for (let attempt = 1; ; attempt++) {
      try {
        const doc = await this.collection.findOneAndUpdate({ _id: name }, take, { upsert: true, returnDocument: 'after' });
        return doc?.holder === holder;
      } catch (error) {
        // Two upserts of a missing lease raced and the other inserted it: decide again against its document.
        if ((error as { code?: number }).code !== DUPLICATE_KEY || attempt >= 2) throw error;
      }
    }
  }

  async renew(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: name, holder }, [{ $set: { expiresAt: { $add: ['$$NOW', ttlMs] } } }]);
    return result.matchedCount === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.collection.deleteOne({ _id: name, holder });
  }

  async get(name: string): Promise<LeaseRecord | null> {
    const doc = await this.collection.findOne({ _id: name });
    return doc ? { holder: doc.holder, expiresAt: doc.expiresAt } : null;
  }
}
