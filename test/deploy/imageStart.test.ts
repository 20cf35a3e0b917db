import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { envPairs, execForm, only, parseDockerfile, type Instruction } from '../support/dockerfile';

/**
 * The image's start, replayed without Docker: the Dockerfile's COPY and RUN lines build an app directory as root (in
 * a temporary directory standing for the image's root), then its CMD runs there as an unprivileged user with the
 * image's ENV, and must answer /readyz. A start command that rebuilds (`npm start`'s prestart) fails here as it
 * fails in the container: the user cannot replace the root-owned dist/.
 *
 * Needs root (to build as root and start as another user); skipped with a message otherwise.
 */
const root = path.join(__dirname, '..', '..');
const instructions = parseDockerfile(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
const isRoot = process.getuid?.() === 0;

/** The uid and gid a USER name stands for: the image's `node` user is `nobody` on machines without one. */
function userIds(name: string): { uid: number; gid: number } {
  const line = (() => {
    try {
      return execFileSync('getent', ['passwd', name], { encoding: 'utf8' });
    } catch {
      return execFileSync('getent', ['passwd', 'nobody'], { encoding: 'utf8' });
    }
  })();
  const [, , uid, gid] = line.trim().split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** The image's file system under `imageRoot`, built by replaying the Dockerfile's COPY, RUN and ENV lines as root. */
function replayBuild(imageRoot: string, user: { uid: number; gid: number }) {
  const inImage = (p: string) => path.join(imageRoot, p);
  const workdir = inImage(only(instructions, 'WORKDIR').args);
  fs.mkdirSync(workdir, { recursive: true });
  const env: Record<string, string> = {};
  for (const step of instructions) replayStep(step);
  return { workdir, env };

  function replayStep({ keyword, args }: Instruction): void {
    if (keyword === 'ENV') {
      // Absolute paths in the image are paths under imageRoot here.
      for (const [name, value] of Object.entries(envPairs({ keyword, args })))
        env[name] = value.startsWith('/') ? inImage(value) : value;
    } else if (keyword === 'COPY') {
      const parts = args.split(/\s+/);
      const target = path.resolve(workdir, parts.pop()!);
      for (const source of parts) {
        const into = parts.length > 1 || target.endsWith(path.sep) || args.trim().endsWith('/');
        fs.cpSync(path.join(root, source), into ? path.join(target, path.basename(source)) : target, {
          recursive: true,
        });
      }
    } else if (keyword === 'RUN') {
      replayRun(args);
    }
  }

  /** Each RUN line the Dockerfile has, done here; a new one fails the test until it is taught here. */
  function replayRun(command: string): void {
    if (/^npm ci\b/.test(command)) {
      // The same lock file's packages, installed as root: this checkout's node_modules, not a second install.
      fs.symlinkSync(path.join(root, 'node_modules'), path.join(workdir, 'node_modules'), 'dir');
      return;
    }
    if (command === 'npm run build') {
      execFileSync('npm', ['run', 'build'], { cwd: workdir, stdio: 'pipe' });
      return;
    }
    const ownedDir = /^mkdir -p (\S+) && chown \S+:\S+ \1$/.exec(command);
    if (ownedDir) {
      fs.mkdirSync(inImage(ownedDir[1]), { recursive: true });
      fs.chownSync(inImage(ownedDir[1]), user.uid, user.gid);
      return;
    }
    throw new Error(`test/deploy/imageStart.test.ts does not know how to replay "RUN ${command}"`);
  }
}

async function waitForReady(child: ChildProcess, output: () => string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  while (Date.now() < deadline) {
    if (exited !== undefined) throw new Error(`the start command exited with code ${exited}:\n${output()}`);
    const port = /localhost:(\d+)\/api\/v1/.exec(output())?.[1];
    if (port) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (ok === 200) return Number(port);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no 200 from /readyz within ${timeoutMs} ms:\n${output()}`);
}

describe('the image start (Dockerfile replayed without Docker)', () => {
  it('starts the built bundle: CMD runs the start:prod script, not the rebuilding `npm start`', () => {
    const scripts = (
      JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(instructions.some((i) => i.keyword === 'ENTRYPOINT')).toBe(false);
    expect(execForm(only(instructions, 'CMD')).join(' ')).toBe(scripts['start:prod']);
    expect(scripts).not.toHaveProperty('prestart:prod');
  });

  (isRoot ? it : it.skip)(
    'answers /readyz when its CMD runs as the USER over an app directory root built',
    async () => {
      const imageRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-image-'));
      // mkdtemp makes a private directory; the image's / is readable by everyone.
      fs.chmodSync(imageRoot, 0o755);
      const user = userIds(only(instructions, 'USER').args);
      expect(user.uid).not.toBe(0);
      let child: ChildProcess | undefined;
      try {
        const { workdir, env } = replayBuild(imageRoot, user);
        expect(fs.statSync(path.join(workdir, 'dist')).uid).toBe(0);
        const [command, ...args] = execForm(only(instructions, 'CMD'));
        let output = '';
        child = spawn(command === 'node' ? process.execPath : command, args, {
          cwd: workdir,
          uid: user.uid,
          gid: user.gid,
          // The image's ENV and no more (PATH for npm if the CMD were npm); PORT=0 lets parallel tests coexist.
          env: { ...env, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: env.DATA_DIR, PORT: '0' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        await waitForReady(child, () => output, 30_000);
        const exit = new Promise<number | null>((resolve) => child!.on('exit', resolve));
        // `docker stop` sends SIGTERM to the CMD's process; it closes and exits 0.
        child.kill('SIGTERM');
        expect(await exit).toBe(0);
        child = undefined;
      } finally {
        child?.kill('SIGKILL');
        fs.rmSync(imageRoot, { recursive: true, force: true });
      }
    },
    60_000,
  );

  if (!isRoot) console.log('skipped: replaying the image start needs root (to build as root and start as USER)');
});
