import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { BLOB_STORES, CONFIG_VARIABLES, EVENT_STORES, READ_MODELS, loadConfig } from '../../src/config';
import { envPairs, execForm, only, parseDockerfile } from '../support/dockerfile';

/**
 * docker-compose.yml must agree with what src/config.ts accepts: the service's variables are ones the config
 * reads and validates, its URLs point at compose services on the ports and replica set those services use.
 */

interface ComposeService {
  image?: string;
  build?: string | { context: string };
  command?: string[];
  environment?: Record<string, string>;
  ports?: (string | number)[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const root = path.join(__dirname, '..', '..');
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as ComposeFile;
const { kurrentdb, mongodb, service } = compose.services;

/** Container-side port of each `host:container` mapping. */
const containerPorts = (s: ComposeService | undefined) =>
  (s?.ports ?? []).map((p) => Number(String(p).split(':').pop()));
const env = (service as ComposeService | undefined)?.environment ?? {}; // the checks below say which is missing
/** A URL of any scheme, read as http so that WHATWG URL parsing gives host, port and query. */
const asUrl = (value: string) => new URL(value.replace(/^[a-z+]+:\/\//, 'http://'));
const flagValue = (command: string[], flag: string) => command[command.indexOf(flag) + 1];

describe('docker-compose.yml', () => {
  it('defines the kurrentdb, mongodb, minio (and its bucket job) and service services', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['kurrentdb', 'minio', 'minio-bucket', 'mongodb', 'service']);
  });

  it("makes MinIO's bucket with MinIO's credentials, on the S3 port MinIO serves", () => {
    const minio = compose.services.minio;
    expect(containerPorts(minio)).toContain(Number(flagValue(minio.command!, '--address').replace(':', '')));
    const job = (compose.services['minio-bucket'] as ComposeService & { entrypoint: string[] }).entrypoint.join(' ');
    const { MINIO_ROOT_USER, MINIO_ROOT_PASSWORD } = minio.environment!;
    expect(job).toContain(`mc alias set local http://minio:9000 ${MINIO_ROOT_USER} ${MINIO_ROOT_PASSWORD}`);
    expect(job).toContain('mc mb --ignore-existing local/folder-service');
    expect(compose.services['minio-bucket'].depends_on).toEqual({ minio: { condition: 'service_healthy' } });
  });

  it("sets only variables the service's configuration reads, and they validate", () => {
    for (const name of Object.keys(env)) expect(CONFIG_VARIABLES).toContain(name);
    const config = loadConfig(env);
    expect(config).toMatchObject({ eventStore: 'kurrentdb', readModel: 'mongodb', blobStore: 'gridfs' });
    expect(EVENT_STORES).toContain(env.EVENT_STORE);
    expect(READ_MODELS).toContain(env.READ_MODEL);
    expect(BLOB_STORES).toContain(env.BLOB_STORE);
  });

  it('points KURRENTDB_URL at the kurrentdb service, its port and its insecure mode', () => {
    const url = asUrl(env.KURRENTDB_URL);
    expect(env.KURRENTDB_URL).toMatch(/^kurrentdb:\/\//);
    expect(compose.services[url.hostname]).toBe(kurrentdb);
    const port = Number(url.port || 2113);
    expect(Number(kurrentdb.environment!.KURRENTDB_NODE_PORT)).toBe(port);
    expect(containerPorts(kurrentdb)).toContain(port);
    expect(kurrentdb.healthcheck!.test.join(' ')).toContain(`http://localhost:${port}/health/live`);
    // tls=false on the client side exactly when the node runs insecure.
    expect(url.searchParams.get('tls')).toBe('false');
    expect(kurrentdb.environment!.KURRENTDB_INSECURE).toBe('true');
  });

  it('runs KurrentDB as an insecure single node without projections, on a volume', () => {
    expect(kurrentdb.image).toMatch(/^kurrentplatform\/kurrentdb:/);
    expect(kurrentdb.environment).toMatchObject({ KURRENTDB_RUN_PROJECTIONS: 'None', KURRENTDB_CLUSTER_SIZE: '1' });
    expect(kurrentdb.volumes).toEqual(['kurrentdb-data:/var/lib/kurrentdb']);
  });

  it('points MONGODB_URL at the mongodb service, its port and its replica set', () => {
    const url = asUrl(env.MONGODB_URL);
    expect(env.MONGODB_URL).toMatch(/^mongodb:\/\//);
    expect(compose.services[url.hostname]).toBe(mongodb);
    const command = mongodb.command!;
    const port = Number(url.port || 27017);
    expect(Number(flagValue(command, '--port'))).toBe(port);
    expect(containerPorts(mongodb)).toContain(port);
    expect(url.pathname).toBe('/folder-service');
    const replicaSet = url.searchParams.get('replicaSet');
    expect(replicaSet).toBe(flagValue(command, '--replSet'));
    // The replica set is initiated with the member address the service connects to.
    const initiate = mongodb.healthcheck!.test.join(' ');
    expect(initiate).toContain(`_id: '${replicaSet}'`);
    expect(initiate).toContain(`host: '${url.hostname}:${port}'`);
    expect(mongodb.image).toBe('mongo:7');
  });

  it('builds the service from the Dockerfile (node:20, npm ci, the built bundle) on the port it listens on', () => {
    expect(service.build).toBe('.');
    const dockerfile = parseDockerfile(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
    expect(only(dockerfile, 'FROM').args).toBe('node:20');
    const runs = dockerfile.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((run) => /^npm ci\b/.test(run))).toBe(true);
    // The process itself, not npm (test/deploy/imageStart.test.ts runs it as the image would).
    expect(execForm(only(dockerfile, 'CMD'))).toEqual(['node', '--enable-source-maps', 'dist/cli/main.js', 'serve']);
    const imageEnv = Object.assign({}, ...dockerfile.filter((i) => i.keyword === 'ENV').map(envPairs)) as Record<
      string,
      string
    >;
    // Compose's values win over the image's; both name the same port and data directory.
    expect(imageEnv).toMatchObject({ PORT: env.PORT, DATA_DIR: env.DATA_DIR });
    const port = loadConfig(env).port;
    expect(only(dockerfile, 'EXPOSE').args).toBe(String(port));
    expect(containerPorts(service)).toContain(port);
    expect(service.volumes).toContain(`service-data:${imageEnv.DATA_DIR}`);
    expect(service.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${port}/readyz`);
  });

  it('starts the service only once both stores report healthy', () => {
    expect(service.depends_on).toEqual({
      kurrentdb: { condition: 'service_healthy' },
      mongodb: { condition: 'service_healthy' },
    });
    expect(kurrentdb.healthcheck).toBeDefined();
    expect(mongodb.healthcheck).toBeDefined();
  });

  it('declares every named volume it mounts', () => {
    const named = Object.values(compose.services)
      .flatMap((s) => s.volumes ?? [])
      .map((v) => v.split(':')[0])
      .filter((source) => !source.startsWith('.') && !source.startsWith('/'));
    for (const name of named) expect(Object.keys(compose.volumes ?? {})).toContain(name);
  });
});

describe('src/config.ts validation', () => {
  const fails = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      expect((error as Error).name).toBe('ConfigError');
      return (error as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('defaults to the embedded stores', () => {
    expect(loadConfig({})).toMatchObject({
      eventStore: 'sqlite',
      readModel: 'sqlite',
      blobStore: 'fs',
      kurrentdbUrl: undefined,
      mongodbUrl: undefined,
    });
  });

  it('names the missing URL with an example', () => {
    expect(fails({ EVENT_STORE: 'kurrentdb' })).toBe(
      'EVENT_STORE=kurrentdb needs KURRENTDB_URL (e.g. kurrentdb://localhost:2113?tls=false).',
    );
    expect(fails({ READ_MODEL: 'mongodb', BLOB_STORE: 'gridfs' })).toBe(
      'READ_MODEL=mongodb needs MONGODB_URL (e.g. mongodb://localhost:27017/folder-service?replicaSet=rs0). ' +
        'BLOB_STORE=gridfs needs MONGODB_URL (e.g. mongodb://localhost:27017/folder-service?replicaSet=rs0).',
    );
  });

  it('refuses unknown adapters and URLs of the wrong scheme, every mistake in one line', () => {
    expect(fails({ EVENT_STORE: 'postgres', BLOB_STORE: 's3' })).toBe(
      'EVENT_STORE must be one of sqlite, kurrentdb, got "postgres". BLOB_STORE must be one of fs, gridfs, got "s3".',
    );
    expect(fails({ EVENT_STORE: 'kurrentdb', KURRENTDB_URL: 'http://localhost:2113' })).toBe(
      'KURRENTDB_URL must be a kurrentdb:// URL such as kurrentdb://localhost:2113?tls=false, got "http://localhost:2113".',
    );
    expect(fails({ READ_MODEL: 'mongodb', MONGODB_URL: 'localhost:27017' })).toMatch(
      /^MONGODB_URL must be a mongodb:\/\/ URL/,
    );
    expect(fails({ KURRENTDB_CONNECT_TIMEOUT_MS: '0' })).toBe(
      'KURRENTDB_CONNECT_TIMEOUT_MS must be a positive integer.',
    );
  });

  it('accepts the other connection-string schemes and treats empty variables as unset', () => {
    expect(
      loadConfig({ EVENT_STORE: 'kurrentdb', KURRENTDB_URL: 'esdb+discover://node1:2113,node2:2113' }).kurrentdbUrl,
    ).toBe('esdb+discover://node1:2113,node2:2113');
    expect(loadConfig({ MONGODB_URL: 'mongodb+srv://cluster.example.com/db' }).mongodbUrl).toBe(
      'mongodb+srv://cluster.example.com/db',
    );
    expect(loadConfig({ EVENT_STORE: '', PORT: '' })).toMatchObject({ eventStore: 'sqlite', port: 8080 });
  });
});
