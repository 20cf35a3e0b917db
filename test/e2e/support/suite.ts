import type { Browser } from 'playwright-core';
import { launchChromium } from './chromium';
import { startLiveService, type LiveService } from './liveService';
import { GirderSession } from './girderPage';

/** What a browser journey suite runs against; filled in by the suite's `beforeAll`. */
export interface BrowserSuite {
  service: LiveService;
  browser: Browser;
  session: GirderSession;
}

export interface BrowserSuiteOptions {
  /** Settings of the service (startLiveService). */
  env?: Parameters<typeof startLiveService>[0];
  /** Flags added to Chromium's. */
  chromiumArgs?: string[];
}

/**
 * Call inside a `describe`: starts the whole service and Chromium with one web-client session before the suite, closes
 * them after it, and fails each test whose session saw a problem (console error, page error, error toast).
 */
export function useBrowserSuite(options: BrowserSuiteOptions = {}): BrowserSuite {
  const suite = {} as BrowserSuite;
  beforeAll(async () => {
    suite.service = await startLiveService(options.env);
    suite.browser = await launchChromium(options.chromiumArgs);
    suite.session = await GirderSession.open(suite.browser, suite.service.baseUrl);
  });
  afterAll(async () => {
    // Whatever beforeAll got to start before it failed.
    const started: Partial<BrowserSuite> = suite;
    await started.session?.close();
    await started.browser?.close();
    await started.service?.close();
  });
  afterEach(() => suite.session.assertNoProblems());
  return suite;
}
