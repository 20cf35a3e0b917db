import type { Collection, Db } from 'mongodb';
import type { NotificationOwner, NotificationRecord, NotificationStore } from '../../../ports/notificationStore';

/**
 * Operational state, not a read model: outside the read-model generations (a rebuild neither copies nor drops it), like
 * the leases. One document per record: the record itself under `doc`, with the owner and times as indexed fields.
 */
export const NOTIFICATIONS_COLLECTION = 'ops_notifications';

interface NotificationDoc {
  _id: string;
  userId: string | null;
  tokenId: string | null;
  updatedMs: number;
  expiresMs: number;
  doc: NotificationRecord;
}

function epochMs(field: string, value: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`notification ${field} is not a date: ${value}`);
  return ms;
}

/**
 * Notification records in the MongoDB read model's database, shared by every process on it.
 * @lazyLoaded required by createReadModel.ts only when the MongoDB read model is configured
 */
export class MongoNotificationStore implements NotificationStore {
  private indexes: Promise<unknown> | null = null;

  constructor(private readonly db: Db) {}

  private async collection(): Promise<Collection<NotificationDoc>> {
    const collection = this.db.collection<NotificationDoc>(NOTIFICATIONS_COLLECTION);
    this.indexes ??= collection
      .createIndexes([
        { key: { userId: 1, updatedMs: 1 }, name: 'user_updated' },
        { key: { tokenId: 1, updatedMs: 1 }, name: 'token_updated' },
        { key: { updatedMs: 1 }, name: 'updated' },
        { key: { expiresMs: 1 }, name: 'expires' },
      ])
      .catch((error: unknown) => {
        this.indexes = null;
        throw error;
      });
    await this.indexes;
    return collection;
  }

  async save(record: NotificationRecord): Promise<void> {
    const doc: NotificationDoc = {
      _id: record._id,
      userId: record.userId ?? null,
      tokenId: record.userId === undefined ? (record.tokenId ?? null) : null,
      updatedMs: epochMs('updated', record.updated),
      expiresMs: epochMs('expires', record.expires),
      doc: record,
    };
    await (await this.collection()).replaceOne({ _id: record._id }, doc, { upsert: true });
  }

  async listFor(owner: NotificationOwner, sinceMs: number | null, nowMs: number): Promise<NotificationRecord[]> {
    const ownerFilter = owner.userId ? { userId: owner.userId } : owner.tokenId ? { tokenId: owner.tokenId } : null;
    if (!ownerFilter) return [];
    const updated = sinceMs === null ? {} : { updatedMs: { $gt: sinceMs } };
    const docs = await (
      await this.collection()
    )
      .find({ ...ownerFilter, expiresMs: { $gt: nowMs }, ...updated })
      .sort({ updatedMs: 1, _id: 1 })
      .toArray();
    return docs.map((doc) => doc.doc);
  }

  async changedSince(sinceMs: number, nowMs: number): Promise<NotificationRecord[]> {
    const docs = await (
      await this.collection()
    )
      .find({ updatedMs: { $gt: sinceMs }, expiresMs: { $gt: nowMs } })
      .sort({ updatedMs: 1, _id: 1 })
      .toArray();
    return docs.map((doc) => doc.doc);
  }

  async deleteExpired(nowMs: number): Promise<number> {
    return (await (await this.collection()).deleteMany({ expiresMs: { $lte: nowMs } })).deletedCount;
  }
}
