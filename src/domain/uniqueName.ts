import crypto from 'node:crypto';
import { z } from 'zod';
import { type Decider, type DomainEvent, unknownEvent } from './decider';

/**
 * Reservation streams own uniqueness invariants (sibling names, logins, emails, collection names): one stream per
 * value, claimed with an expected-revision append in the same atomic write as the event that uses the value. Two
 * writers racing for one value conflict on that stream, on SQLite and on KurrentDB alike.
 */
const reservationEventSchemas = {
  ValueClaimed: z.object({ value: z.string(), ownerType: z.string(), ownerId: z.string() }),
  ValueReleased: z.object({ ownerId: z.string() }),
} as const;

export type ReservationEvent =
  | DomainEvent<'ValueClaimed', z.infer<typeof reservationEventSchemas.ValueClaimed>>
  | DomainEvent<'ValueReleased', z.infer<typeof reservationEventSchemas.ValueReleased>>;

export interface ReservationState {
  owner: { type: string; id: string } | null;
}

/**
 * Whether the value is free is decided before the claim, by the rule of its kind (the reservation's owner for logins
 * and e-mails, the group's or collection's decider for their names, the read model for sibling names): the claim
 * records the decision on the stream, with the expected revision that serialises the writers.
 */
export type ReservationCommand =
  | { type: 'ClaimValue'; data: { value: string; ownerType: string; ownerId: string } }
  | { type: 'ReleaseValue'; data: { ownerId: string } };

export const reservationDecider: Decider<ReservationState, ReservationCommand, ReservationEvent> = {
  initialState: () => ({ owner: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'ValueClaimed':
        return { owner: { type: event.data.ownerType, id: event.data.ownerId } };
      case 'ValueReleased':
        return state.owner?.id === event.data.ownerId ? { owner: null } : state;
      default:
        return unknownEvent(event, state);
    }
  },
  decide: (command) => {
    switch (command.type) {
      case 'ClaimValue':
        return [{ type: 'ValueClaimed', data: command.data }];
      case 'ReleaseValue':
        // Released whoever holds it now (evolve ignores a release by a former owner), as a value's owner lets go.
        return [{ type: 'ValueReleased', data: command.data }];
    }
  },
  eventSchemas: reservationEventSchemas,
};

const digest = (value: string) => crypto.createHash('sha256').update(value).digest('hex').slice(0, 32);

/** Stream owning the name `name` among the children of a container (folder, user or collection). */
export const siblingNameStream = (parentId: string, name: string): string => `siblingname-${parentId}-${digest(name)}`;
export const loginStream = (login: string): string => `login-${digest(login)}`;
export const emailStream = (email: string): string => `email-${digest(email.toLowerCase())}`;
/** Group names are unique regardless of case (Girder compares `lowerName`). */
export const groupNameStream = (name: string): string => `groupname-${digest(name.toLowerCase())}`;
export const collectionNameStream = (name: string): string => `collectionname-${digest(name)}`;

export const claimValue = (value: string, ownerType: string, ownerId: string): ReservationCommand => ({
  type: 'ClaimValue',
  data: { value, ownerType, ownerId },
});
export const releaseValue = (ownerId: string): ReservationCommand => ({ type: 'ReleaseValue', data: { ownerId } });
