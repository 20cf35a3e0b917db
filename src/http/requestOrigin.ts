import type { Request } from 'express';

/**
 * `<scheme>://<host>[:port]` of a request as the caller addressed it (behind a trusted proxy, its `X-Forwarded-*`
 * headers): Girder's default `core.email_host`, the prefix of the links its e-mails carry.
 */
export const requestOrigin = (req: Request): string => `${req.protocol}://${req.get('host') ?? 'localhost'}`;
