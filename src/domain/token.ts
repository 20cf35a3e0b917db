import crypto from 'node:crypto';
import { z } from 'zod';
import { assertEvent, type DomainEvent } from './decider';

export const tokenStream = (hash: string): string => `token-${hash.slice(0, 40)}`;

/** Not published (`/events/schema`); only the token's SHA-256 is ever recorded, never the token. */
const tokenEventSchemas = {
  TokenIssued: z.object({
    hash: z.string(),
    /** Absent on an anonymous session token (`GET /token/session` without a login, Girder's `public: true` token). */
    userId: z.string().optional(),
    scope: z.array(z.string()),
    created: z.string(),
    expires: z.string(),
    apiKeyId: z.string().optional(),
  }),
  TokenRevoked: z.object({ hash: z.string() }),
} as const;

type TokenIssuedData = z.infer<typeof tokenEventSchemas.TokenIssued>;
export type TokenEvent =
  | DomainEvent<'TokenIssued', TokenIssuedData>
  | DomainEvent<'TokenRevoked', z.infer<typeof tokenEventSchemas.TokenRevoked>>;

/** A token event, checked against its schema (tokens have no decisions to make: each is issued once, revoked once). */
export const tokenEvent = (event: TokenEvent): TokenEvent => assertEvent(tokenEventSchemas, event);

/** Tokens are recorded and looked up by their SHA-256, never in clear. */
export const hashToken = (token: string): string => crypto.createHash('sha256').update(token).digest('hex');
