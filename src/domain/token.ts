import type { DomainEvent } from './decider';

export const tokenStream = (hash: string): string => `token-${hash.slice(0, 40)}`;

export interface TokenIssuedData {
  hash: string;
  userId: string;
  scope: string[];
  created: string;
  expires: string;
  apiKeyId?: string;
}

export type TokenEvent = DomainEvent<'TokenIssued', TokenIssuedData> | DomainEvent<'TokenRevoked', { hash: string }>;

import crypto from 'node:crypto';
/** Tokens are recorded and looked up by their SHA-256, never in clear. */
export const hashToken = (token: string): string => crypto.createHash('sha256').update(token).digest('hex');
