import crypto from 'node:crypto';
import { z } from 'zod';
import { type Decider, type DomainEvent, unknownEvent } from './decider';

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

export interface TokenState {
  issued: boolean;
}

export type TokenCommand =
  { type: 'IssueToken'; data: TokenIssuedData } | { type: 'RevokeToken'; data: { hash: string } };

/**
 * A token's stream (`token-<hash>`): issued once, on a stream created for it (a new random token); revoked whatever
 * the stream holds (a revocation of an unknown or already revoked token is harmless, and appended with `any`).
 */
export const tokenDecider: Decider<TokenState, TokenCommand, TokenEvent> = {
  initialState: () => ({ issued: false }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'TokenIssued':
        return { issued: true };
      case 'TokenRevoked':
        return state;
      default:
        return unknownEvent(event, state);
    }
  },
  decide: (command, state) => {
    switch (command.type) {
      case 'IssueToken':
        if (state.issued) throw new Error(`Token ${command.data.hash.slice(0, 8)}… is already issued.`);
        return [{ type: 'TokenIssued', data: command.data }];
      case 'RevokeToken':
        return [{ type: 'TokenRevoked', data: command.data }];
    }
  },
  eventSchemas: tokenEventSchemas,
};

/** Tokens are recorded and looked up by their SHA-256, never in clear. */
export const hashToken = (token: string): string => crypto.createHash('sha256').update(token).digest('hex');
