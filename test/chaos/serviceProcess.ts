import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';

const ROOT = path.resolve(__dirname, '..', '..');

/** One service process (`src/cli/main.ts serve`) on 127.0.0.1, started on a free port. */
export interface ServiceProcess {
  proc: ChildProcess;
  /** `http://127.0.0.1:<port>/api/v1` */
  api: string;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  exited: Promise<void>;
  dead: boolean;
}

/** Starts the service on `dataDir` and resolves once it listens (its log line names the port). */
export function startService(dataDir: string, env: Record<string, string>): Promise<ServiceProcess> {
  const proc = spawn(process.execPath, ['-r', 'tsx/cjs', 'src/cli/main.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', NODE_ENV: 'development', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const service: Partial<ServiceProcess> = { proc, dead: false };
  service.exited = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      service.dead = true;
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the service did not start within 60 s:\n${output.slice(-2000)}`)),
      60_000,
    );
    let listening = false;
    const onData = (chunk: Buffer) => {
      // Only the start-up lines matter; the request log is drained and dropped.
      if (listening) return;
      output += chunk.toString();
      const match = /listening on http:\/\/localhost:(\d+)\/api\/v1/.exec(output);
      if (match) {
        listening = true;
        clearTimeout(timer);
        const origin = `http://127.0.0.1:${match[1]}`;
        resolve({ ...(service as ServiceProcess), origin, api: `${origin}/api/v1` });
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      if (!listening) reject(new Error(`the service exited (${code}) before listening:\n${output.slice(-2000)}`));
    });
  });
}

export async function kill9(service: ServiceProcess): Promise<void> {
  if (!service.dead) service.proc.kill('SIGKILL');
  await service.exited;
}

export async function stopGracefully(service: ServiceProcess): Promise<void> {
  if (!service.dead) service.proc.kill('SIGTERM');
  await service.exited;
}

/** Runs `src/cli/main.ts <args>` to the end; resolves with its exit code and output. */
export function runCli(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  const proc = spawn(process.execPath, ['-r', 'tsx/cjs', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  proc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => proc.once('exit', (code) => resolve({ code: code ?? 1, output })));
}
