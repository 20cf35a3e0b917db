/** What comparing the live read models with a replay of the event log found (`verify`, `PUT /system/check`). */
export interface ReadModelComparison {
  /** Every difference found, one line each (empty: the read models match). */
  differences: string[];
  events: number;
  position: bigint;
  /** Set when the projections cannot get past an event after the checkpoint: that event's position, the head, why. */
  stopped?: { position: bigint; head: bigint; error: Error };
}

/** Compares the live read models with a replay of the log, without touching them (src/cli/verify.ts). */
export type ReadModelCheck = () => Promise<ReadModelComparison>;
