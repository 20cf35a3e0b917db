import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** Browser-side: toasts disappear after a few seconds, so each danger alert is reported as it is added. */
const RECORD_TOASTS = `
new MutationObserver((mutations) => {
  for (const mutation of mutations) {
    mutation.addedNodes.forEach((node) => {
      if (node instanceof HTMLElement && node.matches('.alert-danger')) window.__recordToast((node.textContent || '').trim());
    });
  }
}).observe(document, { childList: true, subtree: true });`;

/** Screenshots of failed steps go here (gitignored). */
export const ARTIFACTS_DIR = path.join(__dirname, '..', 'artifacts');

/**
 * One browser session (its own cookies) on the web client that records every console error, uncaught page error and
 * error toast (Girder's `g:alert` of type danger) it sees; `assertNoProblems` fails the test on any of them.
 */
export class GirderSession {
  readonly problems: string[] = [];
  private constructor(
    readonly context: BrowserContext,
    readonly page: Page,
    private readonly baseUrl: string,
  ) {}

  static async open(browser: Browser, baseUrl: string): Promise<GirderSession> {
    const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const session = new GirderSession(context, page, baseUrl);
    page.on('console', (message) => {
      if (message.type() === 'error') session.problems.push(`console error: ${message.text()}`);
    });
    page.on('pageerror', (error) => session.problems.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() < 400) return;
      const problem = `HTTP ${response.status()} ${response.request().method()} ${response.url()}`;
      session.problems.push(problem);
      // The service's error message, appended when it has arrived (it says why, in a failing step's report).
      const index = session.problems.length - 1;
      void response
        .text()
        .then((body) => {
          if (session.problems[index] === problem) session.problems[index] = `${problem}: ${body.slice(0, 300)}`;
        })
        .catch(() => undefined);
    });
    await page.exposeFunction('__recordToast', (text: string) => session.problems.push(`error toast: ${text}`));
    await page.addInitScript({ content: RECORD_TOASTS });
    return session;
  }

  async goto(route = ''): Promise<void> {
    await this.page.goto(`${this.baseUrl}/${route ? `#${route}` : ''}`);
    await this.page.locator('.g-frontpage-title, #g-app-body-container').first().waitFor();
    await this.idle();
  }

  /** Waits until the client has no REST request outstanding (Girder's own e2e helper). */
  async idle(): Promise<void> {
    await this.page.waitForFunction(
      'window.girder && window.girder.rest && window.girder.rest.numberOutstandingRestRequests() === 0',
      undefined,
      {
        timeout: 15000,
      },
    );
  }

  /** Runs a step; on failure saves a screenshot named after it and rethrows. */
  async step<T>(name: string, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
      const file = path.join(ARTIFACTS_DIR, `${name.replace(/[^a-z0-9]+/gi, '-')}.png`);
      await this.page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
      const seen = this.problems.length ? `\nProblems seen so far:\n${this.problems.join('\n')}` : '';
      throw new Error(`${name} failed (screenshot: ${file}): ${(error as Error).message}${seen}`, { cause: error });
    }
  }

  assertNoProblems(): void {
    if (this.problems.length) throw new Error(`The web client reported problems:\n${this.problems.join('\n')}`);
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}
