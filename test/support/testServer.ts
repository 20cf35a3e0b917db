import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { loadConfig, type Config } from '../../src/config';
import { bootstrap, type Runtime } from '../../src/bootstrap';
import { createApp } from '../../src/http/app';
import { apiResources } from '../../src/http/resources';
import type { Resource } from '../../src/http/routeTable';
import type { Projection } from '../../src/projections/projection';

export interface TestServer {
  app: Express;
  runtime: Runtime;
  dataDir: string;
  /** Every line the service logged, as written (JSON), when started with `captureLog`. */
  logLines: string[];
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Test-only resources mounted after the real ones (to exercise conventions no real route shows). */
  resources?: Resource[];
  /** Reuse this DATA_DIR (e.g. to restart on the same data); it is then left in place by close(). */
  dataDir?: string;
  /** The projections to run instead of the read models' own (src/bootstrap.ts, BootstrapOptions). */
  projection?: Projection;
  /** Keeps the service's log lines in `logLines` instead of writing them out (set LOG_LEVEL too: tests log nothing). */
  captureLog?: boolean;
}

/** A fresh service on a throwaway DATA_DIR; tests drive it through an ApiClient (test/support/apiClient.ts). */
export async function startTestServer(
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-test-'));
  const config: Config = { ...loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, ...env }) };
  const logLines: string[] = [];
  const runtime = await bootstrap(config, {
    ...(options.projection ? { projection: options.projection } : {}),
    ...(options.captureLog ? { logDestination: { write: (line: string) => void logLines.push(line) } } : {}),
  });
  const app = createApp(runtime.services, [...apiResources, ...(options.resources ?? [])]);
  return {
    app,
    runtime,
    dataDir,
    logLines,
    async close() {
      await runtime.close();
      if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
