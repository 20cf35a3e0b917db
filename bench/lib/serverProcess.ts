import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A server under test in a process of its own (so its CPU, heap and RSS are its own), on 127.0.0.1. */
export interface ServerProcess {
  /** `http://127.0.0.1:<port>/api/v1` */
  api: string;
  pid: number;
  /** Resident set size of the server process, in MB (from /proc). */
  rssMB(): number;
  stop(): Promise<void>;
}

/**
 * Forks `entry` (a TypeScript file run through tsx) and waits for it to report `{ port }` over IPC. The child is
 * killed if it has not reported within `startTimeoutMs`, and on stop (SIGTERM, then SIGKILL after 5 s).
 */
export function startServer(
  entry: string,
  env: Record<string, string>,
  startTimeoutMs = 60_000,
  execArgv: string[] = [],
): Promise<ServerProcess> {
  const child = fork(entry, [], {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(entry)} did not start within ${startTimeoutMs} ms`));
    }, startTimeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(entry)} exited with ${code} before listening`));
    });
    child.once('message', (message: { port: number }) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        api: `http://127.0.0.1:${message.port}/api/v1`,
        pid: child.pid!,
        rssMB: () => rssOf(child.pid!),
        stop: () => stopChild(child),
      });
    });
  });
}

/** The Folder Service on a fresh throwaway DATA_DIR: `stop()` keeps it (for a replay), `remove()` stops and deletes. */
export async function startService(
  extraEnv: Record<string, string> = {},
  /** Node options of the service process, e.g. `--cpu-prof` (bench/prof/uploadProfile.ts). */
  execArgv: string[] = [],
): Promise<ServerProcess & { dataDir: string; remove(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-service-'));
  let server: ServerProcess;
  try {
    server = await startServer(
      path.join(__dirname, 'serveService.ts'),
      { DATA_DIR: dataDir, ...extraEnv },
      60_000,
      execArgv,
    );
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...server,
    dataDir,
    remove: async () => {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The bare express yardstick answering with the given bodies (see serveBare.ts). */
export function startBare(bodies: {
  one?: { json: unknown; headers?: Record<string, string> };
  list?: { json: unknown; headers?: Record<string, string> };
}): Promise<ServerProcess> {
  return startServer(path.join(__dirname, 'serveBare.ts'), { BARE_BODIES: JSON.stringify(bodies) });
}

export function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
