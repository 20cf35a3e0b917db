import path from 'node:path';

export interface Config {
  port: number;
  dataDir: string;
  production: boolean;
  /** Lifetime of login tokens and the token cookie, in days (Girder's core.cookie_lifetime). */
  tokenLifetimeDays: number;
  logLevel: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got "${env.PORT}".`);
  return {
    port,
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    production: env.NODE_ENV === 'production',
    tokenLifetimeDays: Number(env.TOKEN_LIFETIME_DAYS ?? 180),
    logLevel: env.LOG_LEVEL ?? (env.NODE_ENV === 'test' ? 'silent' : 'info'),
  };
}
