import crypto from 'node:crypto';
import type { StreamAppend } from '../ports/eventStore';

/**
 * Event ids fixed by the command that appends them, before anything is sent: a UUID (version 8, the form for ids
 * built by an application's own rule) from SHA-256 of `<command id>:<attempt>:<index of the event in the append>`.
 *
 * Why derived and not random per send: every send of one attempt's events, however often an append with an unknown
 * outcome (a deadline, a leader change) is repeated, carries the same ids, so KurrentDB recognises a repeat of an
 * append it already wrote and answers it idempotently instead of writing the events twice, and the adapter can
 * look for exactly these ids to answer "recorded". The attempt is part of the id because a new attempt (after a
 * wrong expected version) decides afresh and may append different events: with the ids of the earlier attempt, the
 * server could take them for the earlier ones and drop them.
 */
export function commandEventId(commandId: string, attempt: number, index: number): string {
  const hex = crypto.hash('sha256', `${commandId}:${attempt}:${index}`, 'hex').slice(0, 32).split('');
  hex[12] = '8'; // version 8
  hex[16] = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16); // RFC 9562 variant (10xx)
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/** The appends with every event that has no id yet given its command id, in order across the appends. */
export function withCommandEventIds(appends: StreamAppend[], commandId: string, attempt: number): StreamAppend[] {
  let index = 0;
  return appends.map((append) => ({
    ...append,
    events: append.events.map((event) => {
      const id = event.id ?? commandEventId(commandId, attempt, index);
      index += 1;
      return { ...event, id };
    }),
  }));
}
