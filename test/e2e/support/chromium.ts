import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); CHROMIUM_PATH points elsewhere. Browser downloads are not used. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const chromiumAvailable = (): boolean => fs.existsSync(CHROMIUM_PATH);

/**
 * `describe` when Chromium is installed, else `describe.skip` with a line saying so: the suite must never pass
 * silently on a machine where it could not run.
 */
export function describeInChromium(name: string, body: () => void): void {
  if (chromiumAvailable()) {
    describe(name, body);
    return;
  }
  console.warn(
    `SKIPPED e2e "${name}": no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH).`,
  );
  describe.skip(name, body);
}

/** Chromium with the suites' flags, and `extraArgs` (e.g. `--host-resolver-rules` for a second host name). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      ...extraArgs,
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
